//! Where a key of a TOML file is, for an error message to name its line:
//! from the parser's spans, not a search of the text.

use toml_edit::{ImDocument, Item, Table, TableLike, Value};

/// The line (from 1) of a byte offset in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A parsed file's keys and their lines.
pub(crate) struct Lines<'a> {
    text: &'a str,
    doc: Option<ImDocument<&'a str>>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Lines {
            text,
            doc: ImDocument::parse(text).ok(),
        }
    }

    /// The line (from 1) of a byte offset.
    pub(crate) fn at(&self, offset: usize) -> usize {
        line_at(self.text, offset)
    }

    /// The line of `path` from the top: table names and keys, a number
    /// indexing an array; 0 where the file does not hold it.
    pub(crate) fn of(&self, path: &[&str]) -> usize {
        self.doc
            .as_ref()
            .and_then(|d| self.find(d.as_table(), path))
            .unwrap_or(0)
    }

    /// The line of `path` inside the `[[run]]` labelled `label`; 0 where
    /// the file does not hold it.
    pub(crate) fn run(&self, label: &str, path: &[&str]) -> usize {
        self.doc
            .as_ref()
            .and_then(|d| d.get("run")?.as_array_of_tables())
            .and_then(|runs| {
                runs.iter()
                    .find(|t| t.get("label").and_then(Item::as_str) == Some(label))
            })
            .and_then(|t: &Table| self.find(t, path))
            .unwrap_or(0)
    }

    /// The line of the `events` entry at `t_s` of the run labelled
    /// `label`, or of the file's own `events` (which every run takes); 0
    /// where neither holds one.
    pub(crate) fn event(&self, label: &str, t_s: f64) -> usize {
        let Some(doc) = &self.doc else {
            return 0;
        };
        let run = doc
            .get("run")
            .and_then(Item::as_array_of_tables)
            .and_then(|runs| {
                runs.iter()
                    .find(|t| t.get("label").and_then(Item::as_str) == Some(label))
            })
            .and_then(|t| t.get("events"));
        let at = |t: &dyn TableLike| {
            let (key, v) = t.get_key_value("t_s")?;
            let v = v.as_float().or_else(|| v.as_integer().map(|i| i as f64))?;
            (v == t_s).then(|| key.span()).flatten()
        };
        run.into_iter()
            .chain(doc.get("events"))
            .flat_map(elements)
            .find_map(at)
            .map_or(0, |s| self.at(s.start))
    }

    fn find(&self, root: &dyn TableLike, path: &[&str]) -> Option<usize> {
        let mut table = root;
        let mut item: Option<&Item> = None;
        let mut start = None;
        for k in path {
            // A number after an array: its element, a table.
            if let (Some(it), Ok(i)) = (item, k.parse::<usize>()) {
                let (span, next): (_, &dyn TableLike) = match it {
                    Item::ArrayOfTables(a) => {
                        let t = a.get(i)?;
                        (t.span(), t)
                    }
                    Item::Value(Value::Array(a)) => {
                        let v = a.get(i)?;
                        (v.span(), v.as_inline_table()?)
                    }
                    _ => return None,
                };
                start = span.map(|s| s.start);
                (table, item) = (next, None);
                continue;
            }
            if let Some(it) = item {
                table = it.as_table_like()?;
            }
            let (key, it) = table.get_key_value(k)?;
            start = key.span().map(|s| s.start);
            item = Some(it);
        }
        start.map(|s| self.at(s))
    }
}

/// The tables of an array of tables, or of an array of inline tables.
fn elements(item: &Item) -> Vec<&dyn TableLike> {
    match item {
        Item::ArrayOfTables(a) => a.iter().map(|t| t as &dyn TableLike).collect(),
        Item::Value(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_inline_table().map(|t| t as &dyn TableLike))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_by_their_place_not_their_text() {
        let text = r#"# rate_mbps in a comment
rate_mbps = 100
knobs = { acc_t_us = 5 }
[scale]
t_us = 7
[[run]]
label = "a"
cc = "acc"
knobs = { acc_t_us = 9 }
[[run]]
label = "b"
cc = "dcqcn"
rate_mbps = 200
[run.knobs]
rpg_time_reset = 3
[[run.events]]
t_s = 1
[[run.events]]
t_s = 2
knobs = { rpg_ai_rate = 5 }
"#;
        let l = Lines::new(text);
        assert_eq!(l.of(&["rate_mbps"]), 2);
        assert_eq!(l.of(&["knobs", "acc_t_us"]), 3);
        assert_eq!(l.of(&["scale"]), 4);
        assert_eq!(l.of(&["scale", "t_us"]), 5);
        assert_eq!(l.run("a", &["knobs", "acc_t_us"]), 9);
        assert_eq!(l.run("b", &["cc"]), 12);
        assert_eq!(l.run("b", &["rate_mbps"]), 13);
        assert_eq!(l.run("a", &["rate_mbps"]), 0, "run a has none");
        assert_eq!(l.run("b", &["knobs", "rpg_time_reset"]), 15);
        assert_eq!(l.run("b", &["events", "1", "t_s"]), 19);
        assert_eq!(l.run("b", &["events", "1", "knobs", "rpg_ai_rate"]), 20);
        assert_eq!(l.run("b", &["events", "2", "t_s"]), 0);
        assert_eq!(l.run("c", &["cc"]), 0);
        assert_eq!(l.event("b", 2.0), 19);
        assert_eq!(l.event("b", 3.0), 0);
        let top = Lines::new("events = [{ t_s = 0.5 }]\n[[run]]\nlabel = \"a\"\n");
        assert_eq!(top.event("a", 0.5), 1, "the file's own events");
        assert_eq!(
            Lines::new("x = [").of(&["x"]),
            0,
            "a file that does not parse"
        );
        assert_eq!(l.at(0), 1);
    }
}
