//! PNG plots of a recorded run: per-flow throughput, per-flow algorithm
//! rate, per-flow window (HPCC, FNCC), and the bottleneck's queue and
//! utilisation, over time (plotters, bitmap backend).
//!
//! Text is drawn with ab_glyph from DejaVu Sans (the `fonts-dejavu-core`
//! package, which testbed/setup-host.sh installs), so no fontconfig is needed.

use crate::report::fct::{Bucket, Fct, Kind};
use crate::report::{Run, Setup};
use anyhow::{anyhow, Context, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

const FONTS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

fn register_font() -> Result<()> {
    static ONCE: Once = Once::new();
    let mut res = Ok(());
    ONCE.call_once(|| {
        res = (|| {
            let path = FONTS
                .iter()
                .find(|p| Path::new(p).exists())
                .ok_or_else(|| {
                    anyhow!("no DejaVu Sans font (install fonts-dejavu-core); looked in {FONTS:?}")
                })?;
            let bytes: &'static [u8] =
                Vec::leak(std::fs::read(path).with_context(|| format!("reading {path}"))?);
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| anyhow!("{path} is not a usable font"))
        })();
    });
    res
}

/// One colour per flow or run, in order.
const COLORS: [RGBColor; 8] = [
    RED,
    BLUE,
    GREEN,
    MAGENTA,
    CYAN,
    BLACK,
    RGBColor(255, 140, 0),
    RGBColor(128, 0, 128),
];

/// Throughput of a flow in windows of `win` ns, as (s since `origin`, Mb/s).
fn throughput(acked: &[(u64, u64)], origin: u64, win: u64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut i = 0;
    for j in 1..acked.len() {
        let (ta, a) = acked[i];
        let (tb, b) = acked[j];
        if tb - ta >= win {
            let mbps = b.saturating_sub(a) as f64 * 8.0 / ((tb - ta) as f64 / 1e9) / 1e6;
            out.push(((tb.saturating_sub(origin)) as f64 / 1e9, mbps));
            i = j;
        }
    }
    out
}

/// The boxed legend of a chart's labelled series, top right.
fn legend_box<'a, 'b: 'a, CT: CoordTranslate>(
    ch: &mut ChartContext<'a, BitMapBackend<'b>, CT>,
) -> Result<()> {
    ch.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// A series' sample in the legend: a short line in its style.
fn legend_line(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style)
}

/// One panel's chart: a caption, time in s on x from 0 to `xmax`, and y
/// from 0 to `ymax` in `unit`, with its mesh drawn.
fn panel<'a, 'b>(
    area: &'a DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>,
    caption: String,
    xmax: f64,
    ymax: f64,
    unit: &str,
) -> Result<ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut ch = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)?;
    ch.configure_mesh().x_desc("time (s)").y_desc(unit).draw()?;
    Ok(ch)
}

/// Writes `<dir>/<label>.png` for one run.
/// A plot per run into `dir` (`rxecc report`'s).
pub fn plot_runs(runs: &[Run], setup: &Setup, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for run in runs {
        plot_run(run, setup, dir).with_context(|| format!("plotting run {}", run.label))?;
    }
    Ok(())
}

pub fn plot_run(run: &Run, setup: &Setup, dir: &Path) -> Result<()> {
    register_font()?;
    let path = dir.join(format!("{}.png", run.label));
    let origin = run.flows.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let end = run
        .flows
        .iter()
        .map(|f| f.end_ns)
        .max()
        .unwrap_or(origin + 1);
    let xmax = (end.saturating_sub(origin)) as f64 / 1e9;
    let cap = setup.capacity_bps as f64 / 1e6;
    let windowed = run.flows.iter().any(|f| !f.window.is_empty());
    let n = if windowed { 5 } else { 4 };
    let root = BitMapBackend::new(&path, (1100, 330 * n as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((n, 1));
    let colors = COLORS;
    let win = (setup.period_ns * 20).max(20_000_000);

    let series: Vec<Vec<(f64, f64)>> = run
        .flows
        .iter()
        .map(|f| throughput(&f.acked, origin, win))
        .collect();
    let ymax = series
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(cap * 1.2, f64::max);
    let mut ch = panel(
        &panels[0],
        format!(
            "{}: per-flow throughput (acked, {} ms windows)",
            run.label,
            win / 1_000_000
        ),
        xmax,
        ymax,
        "Mb/s",
    )?;
    for (i, (f, s)) in run.flows.iter().zip(&series).enumerate() {
        let c = colors[i % colors.len()];
        ch.draw_series(LineSeries::new(s.clone(), c.stroke_width(2)))?
            .label(f.qp.clone())
            .legend(legend_line(c.stroke_width(2)));
    }
    ch.draw_series(LineSeries::new(
        vec![(0.0, cap), (xmax, cap)],
        BLACK.stroke_width(1),
    ))?;
    legend_box(&mut ch)?;

    let rates: Vec<Vec<(f64, f64)>> = run
        .flows
        .iter()
        .map(|f| {
            // Steps: hold each rate until the next change.
            let mut v = Vec::new();
            let mut last: Option<f64> = None;
            for &(t, r) in f
                .rate
                .iter()
                .filter(|(t, _)| *t >= f.start_ns && *t <= f.end_ns)
            {
                let x = t.saturating_sub(origin) as f64 / 1e9;
                let y = r as f64 / 1e6;
                if let Some(l) = last {
                    v.push((x, l));
                }
                v.push((x, y));
                last = Some(y);
            }
            v
        })
        .collect();
    let rmax = rates
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(cap * 1.2, f64::max);
    let mut ch = panel(
        &panels[1],
        format!("{}: per-flow rate set by the algorithm", run.label),
        xmax,
        rmax,
        "Mb/s",
    )?;
    for (i, s) in rates.iter().enumerate() {
        ch.draw_series(LineSeries::new(
            s.clone(),
            colors[i % colors.len()].stroke_width(2),
        ))?;
    }

    let mut next = 2;
    if windowed {
        let w: Vec<Vec<(f64, f64)>> = run
            .flows
            .iter()
            .map(|f| {
                f.window
                    .iter()
                    .filter(|(t, _)| *t >= origin)
                    .map(|&(t, b)| ((t - origin) as f64 / 1e9, b as f64 / 1024.0))
                    .collect()
            })
            .collect();
        let wmax = w.iter().flatten().map(|p| p.1).fold(1.0, f64::max) * 1.1;
        let mut ch = panel(
            &panels[next],
            format!("{}: per-flow window", run.label),
            xmax,
            wmax,
            "KB",
        )?;
        for (i, s) in w.into_iter().enumerate() {
            ch.draw_series(LineSeries::new(s, colors[i % colors.len()].stroke_width(2)))?;
        }
        next += 1;
    }

    let port = run.ports.get(&setup.bottleneck);
    let q: Vec<(f64, f64)> = port
        .map(|p| {
            p.samples
                .iter()
                .filter(|s| s.0 >= origin)
                .map(|s| ((s.0 - origin) as f64 / 1e9, s.1 as f64 / 1024.0))
                .collect()
        })
        .unwrap_or_default();
    let qmax = q.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    let mut ch = panel(
        &panels[next],
        format!("{}: queue at {}", run.label, setup.bottleneck),
        xmax,
        qmax,
        "KB",
    )?;
    ch.draw_series(LineSeries::new(q, BLACK.stroke_width(2)))?;

    // The bottleneck's utilisation: bytes sent per window against C.
    let u: Vec<(f64, f64)> = port
        .map(|p| {
            let d: Vec<(u64, u64)> = p.deq.iter().copied().filter(|s| s.0 >= origin).collect();
            throughput(&d, origin, win)
                .into_iter()
                .map(|(x, mbps)| (x, mbps / cap.max(1e-9)))
                .collect()
        })
        .unwrap_or_default();
    let umax = u.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    let mut ch = panel(
        &panels[next + 1],
        format!(
            "{}: utilisation of {} ({} ms windows)",
            run.label,
            setup.bottleneck,
            win / 1_000_000
        ),
        xmax,
        umax,
        "of C",
    )?;
    ch.draw_series(LineSeries::new(u, BLACK.stroke_width(2)))?;
    ch.draw_series(LineSeries::new(
        vec![(0.0, 1.0), (xmax, 1.0)],
        RED.stroke_width(1),
    ))?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// `slowdown.png` (median and p99 slowdown against flow size, a line per
/// run) and `fct_cdf.png` (CDF of FCT, a line per run) in `dir`.
pub fn plot_fct(
    runs: &[(String, Vec<Bucket>)],
    raw: &[(String, Vec<Fct>)],
    kind: Kind,
    dir: &Path,
) -> Result<()> {
    register_font()?;
    let colors = COLORS;
    let path = dir.join("slowdown.png");
    let root = BitMapBackend::new(&path, (1100, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let xmax = runs
        .iter()
        .flat_map(|(_, b)| b.iter().map(|x| x.max_size))
        .max()
        .unwrap_or(1)
        .max(2) as f64;
    let ymax = runs
        .iter()
        .flat_map(|(_, b)| b.iter().map(|x| x.p99))
        .fold(2.0, f64::max)
        * 1.1;
    let mut ch = ChartBuilder::on(&root)
        .caption(
            format!("FCT slowdown by flow size ({kind:?} flows): median solid, p99 dashed"),
            ("sans-serif", 22),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d((1.0..xmax).log_scale(), (1.0..ymax).log_scale())?;
    ch.configure_mesh()
        .x_desc("flow size (bytes)")
        .y_desc("slowdown")
        .draw()?;
    for (i, (label, b)) in runs.iter().enumerate() {
        let c = colors[i % colors.len()];
        let pts = |f: fn(&Bucket) -> f64| -> Vec<(f64, f64)> {
            b.iter().map(|x| (x.max_size.max(1) as f64, f(x))).collect()
        };
        ch.draw_series(LineSeries::new(pts(|x| x.p50), c.stroke_width(2)))?
            .label(label.clone())
            .legend(legend_line(c.stroke_width(2)));
        ch.draw_series(DashedLineSeries::new(
            pts(|x| x.p99),
            6,
            4,
            c.stroke_width(1),
        ))?;
    }
    legend_box(&mut ch)?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))?;

    let path = dir.join("fct_cdf.png");
    let root = BitMapBackend::new(&path, (1100, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let ms = |l: &Fct| l.fct_ns as f64 / 1e6;
    let xmax = raw
        .iter()
        .flat_map(|(_, ls)| ls.iter().map(ms))
        .fold(1.0, f64::max)
        * 1.1;
    let xmin = raw
        .iter()
        .flat_map(|(_, ls)| ls.iter().map(ms))
        .fold(xmax, f64::min)
        .max(1e-3);
    let mut ch = ChartBuilder::on(&root)
        .caption(
            "CDF of flow completion time (all flows)",
            ("sans-serif", 22),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d((xmin..xmax).log_scale(), 0.0..1.0)?;
    ch.configure_mesh()
        .x_desc("FCT (ms)")
        .y_desc("fraction of flows")
        .draw()?;
    for (i, (label, ls)) in raw.iter().enumerate() {
        let c = colors[i % colors.len()];
        let mut v: Vec<f64> = ls.iter().map(ms).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len().max(1) as f64;
        let pts: Vec<(f64, f64)> = v
            .iter()
            .enumerate()
            .map(|(k, &x)| (x.max(xmin), (k + 1) as f64 / n))
            .collect();
        ch.draw_series(LineSeries::new(pts, c.stroke_width(2)))?
            .label(label.clone())
            .legend(legend_line(c.stroke_width(2)));
    }
    legend_box(&mut ch)?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// One line of [`plot_lines`].
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the colours: a run's testbed and model lines share one.
    pub color: usize,
    /// Dashed (the model's), else solid (the testbed's).
    pub dashed: bool,
}

/// A chart of `lines` on shared axes, with an optional horizontal
/// reference (`level`, e.g. the bottleneck's capacity), written to `path`:
/// a paper's figure redrawn.
pub fn plot_lines(
    path: &Path,
    title: &str,
    axes: (&str, &str),
    lines: &[Line],
    level: Option<(f64, &str)>,
) -> Result<()> {
    register_font()?;
    let xmax = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::max)
        .max(1e-9);
    let ymax = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .chain(level.map(|l| l.0))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.1;
    let root = BitMapBackend::new(path, (1100, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut ch = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)?;
    ch.configure_mesh().x_desc(axes.0).y_desc(axes.1).draw()?;
    for l in lines {
        let c = COLORS[l.color % COLORS.len()];
        let style = c.stroke_width(2);
        if l.dashed {
            ch.draw_series(DashedLineSeries::new(l.points.clone(), 8, 5, style))?
                .label(l.label.clone())
                .legend(legend_line(style));
        } else {
            ch.draw_series(LineSeries::new(l.points.clone(), style))?
                .label(l.label.clone())
                .legend(legend_line(style));
        }
    }
    if let Some((y, what)) = level {
        ch.draw_series(LineSeries::new(
            vec![(0.0, y), (xmax, y)],
            BLACK.stroke_width(1),
        ))?
        .label(what.to_string())
        .legend(legend_line(BLACK.stroke_width(1)));
    }
    legend_box(&mut ch)?;
    root.present()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
