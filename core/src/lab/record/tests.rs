use super::*;
use crate::lab::examples::EXAMPLES;
use crate::simt::shuffle::ShuffleMode;

fn example(name: &str) -> &'static crate::lab::examples::Example {
    EXAMPLES
        .iter()
        .find(|e| e.name == name)
        .expect("bundled example")
}

#[test]
fn instruments_the_bundled_examples_into_valid_wgsl() {
    for e in EXAMPLES {
        let i = instrument(e.source, e.entry).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        // The output parses and validates again.
        crate::lab::module::parse(&i.source)
            .unwrap_or_else(|err| panic!("{}: {err:?}\n{}", e.name, i.source));
        if std::env::var_os("WS_DUMP").is_some() {
            println!("== {} {:?} {:?}\n{}", e.name, i.binding, i.sites, i.source);
        }
    }
}

#[test]
fn reduce_shared_sites_are_its_shared_accesses_and_barriers() {
    let i = instrument(example("reduce-shared").source, None).unwrap();
    // Line 12 stores, 13 barrier, 16 two loads and a store, 18 barrier, 21 a load.
    let got: Vec<(u32, Op)> = i.sites.iter().map(|s| (s.line, s.op)).collect();
    assert_eq!(
        got,
        vec![
            (12, Op::SharedStore),
            (13, Op::Barrier),
            (16, Op::SharedLoad),
            (16, Op::SharedLoad),
            (16, Op::SharedStore),
            (18, Op::Barrier),
            (21, Op::SharedLoad),
        ]
    );
    assert_eq!(
        i.binding,
        crate::lab::dispatch::Binding {
            group: 0,
            binding: 2
        }
    );
    assert_eq!(i.unrecorded, 0);
}

#[test]
fn global_scope_adds_the_storage_loads_and_stores_of_the_softmax_row() {
    let e = example("softmax-warp");
    // Without the scope: the butterfly's shuffle only (no workgroup memory, no barrier).
    let plain = instrument(e.source, e.entry).unwrap();
    let got: Vec<(u32, Op)> = plain.sites.iter().map(|s| (s.line, s.op)).collect();
    assert_eq!(got, vec![(37, Op::SubgroupGather)]);
    assert_eq!(plain.sites[0].gather, Some(ShuffleMode::Xor));
    let i = instrument_with(e.source, e.entry, Scope { global: true }).unwrap();
    let b = |binding| Some(crate::lab::dispatch::Binding { group: 0, binding });
    // The source's lines: mask_at's load (30), the shuffle (37), ∇y and y in the first loop
    // (61, 62), their re-reads past PER_LANE (80, 81) and the store of ∇x (83); functions come
    // before the entry point, each in statement order.
    let got: Vec<(u32, Op, u32, Option<_>)> = i
        .sites
        .iter()
        .map(|s| (s.line, s.op, s.width, s.binding))
        .collect();
    assert_eq!(
        got,
        vec![
            (30, Op::GlobalLoad, 4, b(2)),
            (37, Op::SubgroupGather, 0, None),
            (61, Op::GlobalLoad, 4, b(1)),
            (62, Op::GlobalLoad, 4, b(3)),
            (80, Op::GlobalLoad, 4, b(1)),
            (81, Op::GlobalLoad, 4, b(3)),
            (83, Op::GlobalStore, 4, b(4)),
        ]
    );
    crate::lab::module::parse(&i.source).unwrap();
}

/// Words of one record (ticket, workgroup 0, subgroup 0, `lane`, subgroup size 4, line 1, …).
fn word(ticket: u32, lane: u32, site: u32, op: Op, width: u32, addr: u32, value: f32) -> Vec<u32> {
    vec![
        ticket,
        0,
        0,
        lane,
        4,
        1,
        op as u32 | width << 8,
        site,
        addr,
        value.to_bits(),
        0,
    ]
}

#[test]
fn shuffles_and_global_requests_decode_by_hand() {
    let sites = [
        Site {
            line: 1,
            op: Op::SubgroupGather,
            width: 0,
            binding: None,
            gather: Some(ShuffleMode::Xor),
        },
        Site {
            line: 1,
            op: Op::GlobalLoad,
            width: 4,
            binding: Some(crate::lab::dispatch::Binding {
                group: 0,
                binding: 1,
            }),
            gather: None,
        },
    ];
    let mut words = vec![8];
    // A 4-lane subgroup: xor 1 (level log2 4 − log2 1 = 2), lanes receive 10, 11, 12, 13.
    for l in 0..4 {
        words.extend(word(l, l, 0, Op::SubgroupGather, 0, 1, 10.0 + l as f32));
    }
    // Loads of words 0, 8, 16, 24 (byte offsets 0, 32, 64, 96): four 32-byte sectors, where
    // 16 bytes would fit in one.
    for l in 0..4 {
        words.extend(word(4 + l, l, 1, Op::GlobalLoad, 4, 32 * l, 0.0));
    }
    let d = decode::decode(&words, &sites, "k", "hand", 4, "x\n").unwrap();
    assert_eq!((d.records, d.dropped, d.subgroup_size), (8, 0, 4));
    let events = &d.trace.warps[0].events;
    assert_eq!(
        events[0].kind,
        crate::simt::EventKind::Shuffle {
            mode: ShuffleMode::Xor,
            arg: 1
        }
    );
    assert_eq!(events[0].level, Some(2));
    let partners: Vec<_> = events[0].lanes.iter().map(|l| l.source).collect();
    use crate::simt::shuffle::Source::Lane;
    assert_eq!(
        partners,
        vec![Some(Lane(1)), Some(Lane(0)), Some(Lane(3)), Some(Lane(2))]
    );
    assert_eq!(events[1].metrics.sectors, Some(4));
    assert_eq!(events[1].metrics.ideal_sectors, Some(1));
    let c = d.lines[0].counters;
    assert_eq!(
        (c.global_requests, c.global_sectors, c.subgroup_ops),
        (1, 4, 1)
    );
    // Level of a halving butterfly: mask n/2 is level 1; a mask that is no power of two, none.
    assert_eq!(decode::xor_level(16, 32), Some(1));
    assert_eq!(decode::xor_level(1, 32), Some(5));
    assert_eq!(decode::xor_level(3, 32), None);
    assert_eq!(
        decode::partner(ShuffleMode::Down, 3, 1, 4),
        crate::simt::shuffle::Source::Own
    );
}

#[test]
fn histogram_sites_include_its_global_atomic() {
    let i = instrument(example("histogram").source, None).unwrap();
    let got: Vec<(u32, Op)> = i.sites.iter().map(|s| (s.line, s.op)).collect();
    // Line 19 atomicStore (a store to an atomic), 21 barrier, 24 the workgroup atomicAdd,
    // 26 barrier, 28 atomicLoad of the bin then the global atomicAdd into `bins` (0:1): the
    // simulator counts that one among line 28's atomics, so the recording must too.
    assert_eq!(
        got,
        vec![
            (19, Op::SharedStore),
            (21, Op::Barrier),
            (24, Op::SharedAtomic),
            (26, Op::Barrier),
            (28, Op::SharedLoad),
            (28, Op::GlobalAtomic),
        ]
    );
    assert_eq!(
        i.sites[5].binding,
        Some(crate::lab::dispatch::Binding {
            group: 0,
            binding: 1
        })
    );
}

#[test]
fn an_order_difference_reads_in_both_languages() {
    use super::decode::OrderedAccess;
    let a = OrderedAccess {
        warp: 1,
        line: 18,
        op: "bar.sync",
    };
    let t = OrderedAccess::text(Some(&a));
    assert_eq!(t.en, "warp 1 line 18 bar.sync");
    assert_eq!(t.zh, "线程束 1 第 18 行 bar.sync");
    let none = OrderedAccess::text(None);
    assert_eq!((none.en.as_str(), none.zh.as_str()), ("none", "无"));
}
