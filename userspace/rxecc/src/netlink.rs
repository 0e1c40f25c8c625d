//! The testbed's links, addresses, neighbours and namespaces, configured
//! through rtnetlink (the `rtnetlink` crate) instead of by running `ip` and
//! `bridge`: errors come back as errnos, not as English to match.
//!
//! rtnetlink is async; [`Net`] runs each request to completion on a
//! current-thread tokio runtime of its own, so callers stay synchronous. A
//! netlink socket configures the network namespace it was opened in, so a
//! [`Net`] for a host is opened inside that host's namespace.

use anyhow::{bail, Context, Result};
use futures::TryStreamExt;
use rtnetlink::packet_route::address::AddressAttribute;
use rtnetlink::packet_route::link::{BridgeStpState, InfoData, InfoVeth};
use rtnetlink::packet_route::neighbour::{NeighbourFlags, NeighbourState};
use rtnetlink::{
    Handle, LinkBridge, LinkBridgePort, LinkMessageBuilder, LinkUnspec, LinkVeth, NetworkNamespace,
};
use std::net::{IpAddr, Ipv4Addr};
use std::os::fd::AsRawFd;

/// One rtnetlink connection, in the namespace it was opened in.
pub struct Net {
    rt: tokio::runtime::Runtime,
    handle: Handle,
}

/// An rtnetlink error with what was being done.
fn nl<T>(r: std::result::Result<T, rtnetlink::Error>, what: &str) -> Result<T> {
    r.map_err(|e| match e {
        rtnetlink::Error::NetlinkError(m) => anyhow::anyhow!("{what}: {}", m.to_io()),
        e => anyhow::anyhow!("{what}: {e}"),
    })
}

/// A MAC address "aa:bb:cc:dd:ee:ff" as bytes.
fn mac_bytes(mac: &str) -> Result<Vec<u8>> {
    let b: Vec<u8> = mac
        .split(':')
        .map(|x| u8::from_str_radix(x, 16))
        .collect::<std::result::Result<_, _>>()
        .with_context(|| format!("'{mac}' is not a MAC address"))?;
    if b.len() != 6 {
        bail!("'{mac}' is not a MAC address");
    }
    Ok(b)
}

impl Net {
    /// A connection in the calling thread's network namespace.
    pub fn open() -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .context("starting the netlink runtime")?;
        let (conn, handle, _) = {
            let _g = rt.enter();
            rtnetlink::new_connection().context("opening an rtnetlink socket")?
        };
        rt.spawn(conn);
        Ok(Net { rt, handle })
    }

    /// Runs one request to completion; errors say what was being done.
    fn exec<T>(
        &self,
        req: impl std::future::Future<Output = std::result::Result<T, rtnetlink::Error>>,
        what: &str,
    ) -> Result<T> {
        nl(self.rt.block_on(req), what)
    }

    /// `tc qdisc replace dev <index> root handle <major>: <kind>`, for a
    /// kind that takes no options (a registered BPF qdisc): a request on
    /// this socket, where a `tc` process cost 0.3 s per port under TCG.
    pub fn replace_root_qdisc(&self, index: u32, major: u16, kind: &str) -> Result<()> {
        use rtnetlink::packet_core::{
            NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_REPLACE, NLM_F_REQUEST,
        };
        use rtnetlink::packet_route::tc::{TcAttribute, TcHandle, TcMessage};
        use rtnetlink::packet_route::RouteNetlinkMessage;
        let Ok(idx) = i32::try_from(index) else {
            bail!("link index {index} out of range");
        };
        let mut msg = TcMessage::with_index(idx);
        msg.header.parent = TcHandle::ROOT;
        msg.header.handle = TcHandle::from(u32::from(major) << 16);
        msg.attributes.push(TcAttribute::Kind(kind.to_string()));
        let mut req = NetlinkMessage::from(RouteNetlinkMessage::NewQueueDiscipline(msg));
        req.header.flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
        let mut handle = self.handle.clone();
        self.exec(
            async move {
                let mut resp = handle.request(req)?;
                while let Some(m) = futures::StreamExt::next(&mut resp).await {
                    if let NetlinkPayload::Error(e) = m.payload {
                        return Err(rtnetlink::Error::NetlinkError(e));
                    }
                }
                Ok(())
            },
            &format!("replacing the root qdisc of link {index} by {kind}"),
        )
    }

    /// `tc qdisc del dev <index> root`, or `... clsact`; false if there
    /// was none of ours to delete (ENOENT: the default qdisc, or none).
    pub fn del_qdisc(&self, index: u32, clsact: bool) -> Result<bool> {
        use rtnetlink::packet_route::tc::TcHandle;
        let Ok(idx) = i32::try_from(index) else {
            bail!("link index {index} out of range");
        };
        let mut req = self.handle.qdisc().del(idx);
        let m = req.message_mut();
        if clsact {
            m.header.parent = TcHandle::CLSACT;
            m.header.handle = TcHandle::from(0xffff_0000u32);
        } else {
            m.header.parent = TcHandle::ROOT;
        }
        match self.rt.block_on(req.execute()) {
            Ok(()) => Ok(true),
            Err(rtnetlink::Error::NetlinkError(e)) if e.raw_code() == -libc::ENOENT => Ok(false),
            Err(e) => nl(
                Err(e),
                &format!(
                    "deleting the {} qdisc of link {index}",
                    if clsact { "clsact" } else { "root" }
                ),
            ),
        }
    }

    /// The index of link `name` in this namespace.
    pub fn index(&self, name: &str) -> Result<u32> {
        let mut s = self
            .handle
            .link()
            .get()
            .match_name(name.to_string())
            .execute();
        match self.rt.block_on(s.try_next()) {
            Ok(Some(m)) => Ok(m.header.index),
            Ok(None) => bail!("no link {name}"),
            Err(e) => nl(Err(e), &format!("looking up link {name}")),
        }
    }

    /// `ip link add NAME type bridge stp_state 0 mcast_snooping 0`, with
    /// that MTU, up.
    pub fn add_bridge(&self, name: &str, mtu: u32) -> Result<()> {
        let m = LinkBridge::new(name)
            .stp_state(BridgeStpState::Disabled)
            .mcast_snooping(false)
            .mtu(mtu)
            .up()
            .build();
        self.exec(
            self.handle.link().add(m).execute(),
            &format!("adding bridge {name}"),
        )
    }

    /// `ip link add NAME mtu MTU [address MAC] type veth peer name PEER mtu MTU`.
    pub fn add_veth(&self, name: &str, peer: &str, mtu: u32, mac: Option<&str>) -> Result<()> {
        let peer_msg = LinkMessageBuilder::<LinkUnspec>::new()
            .name(peer.to_string())
            .mtu(mtu)
            .build();
        let mut b = LinkVeth::new(name, peer)
            .mtu(mtu)
            .set_info_data(InfoData::Veth(InfoVeth::Peer(peer_msg)));
        if let Some(mac) = mac {
            b = b.address(mac_bytes(mac)?);
        }
        self.exec(
            self.handle.link().add(b.build()).execute(),
            &format!("adding veth {name} <-> {peer}"),
        )
    }

    /// `ip link set NAME netns NS`.
    pub fn move_to_netns(&self, name: &str, ns: &str) -> Result<()> {
        let path = format!("/run/netns/{ns}");
        let f = std::fs::File::open(&path)
            .with_context(|| format!("no network namespace '{ns}' ({path})"))?;
        let m = LinkUnspec::new_with_index(self.index(name)?)
            .setns_by_fd(f.as_raw_fd())
            .build();
        self.exec(
            self.handle.link().set(m).execute(),
            &format!("moving {name} into namespace {ns}"),
        )
    }

    /// `ip link set NAME [mtu MTU] up`.
    pub fn up(&self, name: &str, mtu: Option<u32>) -> Result<()> {
        let mut b = LinkUnspec::new_with_index(self.index(name)?).up();
        if let Some(mtu) = mtu {
            b = b.mtu(mtu);
        }
        self.exec(
            self.handle.link().set(b.build()).execute(),
            &format!("setting {name} up"),
        )
    }

    /// `ip link set OLD down name NEW promisc on|off [address MAC]`: a NIC takes
    /// the name of the port it plays (a renamed link must be down).
    /// Promiscuous, a host's virtio NIC takes PFC frames (to the 802.1Qbb
    /// multicast address, which QEMU's receive filter drops otherwise).
    pub fn rename(&self, old: &str, new: &str, promisc: bool, mac: Option<&str>) -> Result<()> {
        let mut b = LinkUnspec::new_with_index(self.index(old)?)
            .down()
            .name(new.to_string())
            .promiscuous(promisc);
        if let Some(mac) = mac {
            b = b.address(mac_bytes(mac)?);
        }
        let m = b.build();
        self.exec(
            self.handle.link().set(m).execute(),
            &format!("renaming {old} to {new}"),
        )
    }

    /// `ip link set NAME mtu MTU master BRIDGE`, then `bridge link set
    /// dev NAME learning off flood off mcast_flood off`: the switch's
    /// forwarding is its static FDB. The port stays down (`up` after): a
    /// frame its peer sent while learning was still on was learned into
    /// the FDB (test_topology_netlink, once).
    pub fn enslave(&self, name: &str, bridge: &str, mtu: u32) -> Result<()> {
        let idx = self.index(name)?;
        let m = LinkUnspec::new_with_index(idx)
            .controller(self.index(bridge)?)
            .mtu(mtu)
            .build();
        self.exec(
            self.handle.link().set(m).execute(),
            &format!("adding {name} to bridge {bridge}"),
        )?;
        let p = LinkBridgePort::new(idx)
            .learning(false)
            .flood(false)
            .mcast_flood(false)
            .build();
        self.exec(
            self.handle.link().set_port(p).execute(),
            &format!("setting bridge port {name}'s learning and flooding off"),
        )
    }

    /// `ip addr add IP/PREFIX dev NAME`.
    pub fn add_addr(&self, name: &str, ip: Ipv4Addr, prefix: u8) -> Result<()> {
        let idx = self.index(name)?;
        let mut r = self.handle.address().add(idx, IpAddr::V4(ip), prefix);
        // As `ip addr add` without `brd`: no broadcast address.
        r.message_mut()
            .attributes
            .retain(|a| !matches!(a, AddressAttribute::Broadcast(_)));
        self.exec(r.execute(), &format!("adding {ip}/{prefix} to {name}"))
    }

    /// `ip neigh replace IP lladdr MAC dev NAME nud permanent`.
    pub fn neigh_permanent(&self, name: &str, ip: Ipv4Addr, mac: &str) -> Result<()> {
        let idx = self.index(name)?;
        let r = self
            .handle
            .neighbours()
            .add(idx, IpAddr::V4(ip))
            .link_layer_address(&mac_bytes(mac)?)
            .state(NeighbourState::Permanent)
            .replace()
            .execute();
        self.exec(r, &format!("adding neighbour {ip} on {name}"))
    }

    /// `bridge fdb replace MAC dev NAME master static`: a static entry in
    /// the bridge's FDB (NUD_NOARP; NUD_PERMANENT would make it the
    /// bridge's own address, delivered locally instead of forwarded).
    pub fn fdb_static(&self, name: &str, mac: &str) -> Result<()> {
        let idx = self.index(name)?;
        let r = self
            .handle
            .neighbours()
            .add_bridge(idx, &mac_bytes(mac)?)
            .state(NeighbourState::Noarp)
            .flags(NeighbourFlags::Controller)
            .replace()
            .execute();
        self.exec(r, &format!("adding {mac} to {name}'s FDB"))
    }

    /// `ip link del NAME`; a link that is gone already is fine.
    pub fn del_link(&self, name: &str) -> Result<()> {
        let Ok(idx) = self.index(name) else {
            return Ok(());
        };
        self.exec(
            self.handle.link().del(idx).execute(),
            &format!("deleting link {name}"),
        )
    }
}

/// Runs a namespace operation (no netlink socket: these mount and unlink
/// under /run/netns) to completion.
fn netns_op(
    what: String,
    op: impl std::future::Future<Output = std::result::Result<(), rtnetlink::Error>>,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .context("starting the netlink runtime")?;
    nl(rt.block_on(op), &what)
}

/// `ip netns add NAME`.
pub fn add_netns(name: &str) -> Result<()> {
    netns_op(
        format!("adding network namespace {name}"),
        NetworkNamespace::add(name.to_string()),
    )
}

/// `ip netns del NAME`; one that is gone already is fine.
pub fn del_netns(name: &str) -> Result<()> {
    if !std::path::Path::new(&format!("/run/netns/{name}")).exists() {
        return Ok(());
    }
    netns_op(
        format!("deleting network namespace {name}"),
        NetworkNamespace::del(name.to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_addresses_parse() {
        assert_eq!(
            mac_bytes("02:77:00:00:00:0a").unwrap(),
            vec![2, 0x77, 0, 0, 0, 10]
        );
        assert!(mac_bytes("02:77:00:00:00").is_err());
        assert!(mac_bytes("02:77:00:00:00:zz").is_err());
    }
}
