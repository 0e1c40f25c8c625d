-- rxe-cc's INT shim (docs/wire-format.md) for Wireshark and tshark:
--   tshark -X lua_script:tests/rxecc_int.lua -r capture.pcap
-- A RoCEv2 packet whose IP TOS has 0x04 set and whose UDP payload starts
-- with 0xc5 carries the shim before its BTH. This shows the shim and hands
-- the rest to Wireshark's own RoCEv2 (InfiniBand) dissector; any other
-- packet goes to that dissector as before.
local udp_port = DissectorTable.get("udp.port")
local roce = udp_port:get_dissector(4791)
local band = bit32 and bit32.band or bit.band

local p = Proto("rxecc_int", "rxe-cc INT shim")
local f = {
	magic = ProtoField.uint8("rxecc_int.magic", "Magic", base.HEX),
	version = ProtoField.uint8("rxecc_int.version", "Version"),
	kind = ProtoField.uint8("rxecc_int.kind", "Kind", base.DEC, { [1] = "HPCC", [2] = "FNCC", [3] = "ICC" }),
	flags = ProtoField.uint8("rxecc_int.flags", "Flags", base.HEX, { [0] = "data", [1] = "echo (in an ACK)" }),
	nhops = ProtoField.uint8("rxecc_int.nhops", "Hop records written"),
	max_hops = ProtoField.uint8("rxecc_int.max_hops", "Room, hop records"),
	overflow = ProtoField.uint8("rxecc_int.overflow", "Hops that found no room"),
	n_flows = ProtoField.uint16("rxecc_int.n_flows", "Receiver's active flows (FNCC N)"),
	rate = ProtoField.uint32("rxecc_int.hop.rate_mbps", "B, Mb/s"),
	ts = ProtoField.uint32("rxecc_int.hop.ts_ns", "TS, ns (low 32 bits)"),
	tx = ProtoField.uint32("rxecc_int.hop.tx_bytes", "txBytes (low 32 bits)"),
	qlen = ProtoField.uint32("rxecc_int.hop.qlen", "qLen, bytes"),
	qrate = ProtoField.int32("rxecc_int.icc.qlen_rate", "ICC qlenrate, bytes/ms"),
	lu = ProtoField.uint16("rxecc_int.icc.lu_permille", "ICC link utilisation, 1/1000"),
	flows = ProtoField.uint16("rxecc_int.icc.flows", "ICC flows on the port"),
}
p.fields = { f.magic, f.version, f.kind, f.flags, f.nhops, f.max_hops, f.overflow, f.n_flows,
	f.rate, f.ts, f.tx, f.qlen, f.qrate, f.lu, f.flows }
local HDR = 12
local dsfield = Field.new("ip.dsfield")

function p.dissector(tvb, pinfo, tree)
	local ds = dsfield()
	if ds and band(ds.value, 0x04) ~= 0 and tvb:len() >= HDR and tvb(0, 1):uint() == 0xc5 then
		local len = HDR + 16 * tvb(5, 1):uint()
		if tvb:len() > len then
			local t = tree:add(p, tvb(0, len))
			t:add(f.magic, tvb(0, 1))
			t:add(f.version, tvb(1, 1))
			t:add(f.kind, tvb(2, 1))
			t:add(f.flags, tvb(3, 1))
			t:add(f.nhops, tvb(4, 1))
			t:add(f.max_hops, tvb(5, 1))
			t:add(f.overflow, tvb(6, 1))
			t:add(f.n_flows, tvb(8, 2))
			local icc = tvb(2, 1):uint() == 3
			for i = 0, math.min(tvb(4, 1):uint(), tvb(5, 1):uint()) - 1 do
				local o = HDR + 16 * i
				local h = t:add(tvb(o, 16), icc and "ICC feedback" or ("Hop " .. i))
				h:add(f.rate, tvb(o, 4))
				if icc then
					h:add(f.qlen, tvb(o + 4, 4))
					h:add(f.qrate, tvb(o + 8, 4))
					h:add(f.lu, tvb(o + 12, 2))
					h:add(f.flows, tvb(o + 14, 2))
				else
					h:add(f.ts, tvb(o + 4, 4))
					h:add(f.tx, tvb(o + 8, 4))
					h:add(f.qlen, tvb(o + 12, 4))
				end
			end
			return roce:call(tvb(len):tvb(), pinfo, tree)
		end
	end
	return roce:call(tvb, pinfo, tree)
end

udp_port:add(4791, p)
