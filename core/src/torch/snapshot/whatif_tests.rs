//! Tests of the what-if replay: with the file's own settings it equals the replay; each setting,
//! on a hand-made trace worked out by hand from `c10/cuda/CUDACachingAllocator.cpp`'s rules,
//! moves the figures the way the source says; parameters are checked as `CUDAAllocatorConfig`
//! checks them.

use super::tests::{data, ev};
use super::whatif::{WhatIfParams, resolve, whatif};
use super::*;
use crate::params::ParamValues;

const M: u64 = 1 << 20;

/// A snapshot holding only `trace` (no segments, no settings: PyTorch's defaults).
fn trace(events: Vec<TraceEvent>) -> Snapshot {
    Snapshot {
        layout: "dict",
        protocol: 4,
        blocks_have_addresses: true,
        segments: Vec::new(),
        device_traces: vec![events],
        allocator_settings: BTreeMap::new(),
        frames: Default::default(),
    }
}

/// alloc A, alloc B (sizes `a`, `b`), free both, alloc C (`c`).
fn two_then_one(a: u64, b: u64, c: u64) -> Snapshot {
    trace(vec![
        ev("alloc", 1, a),
        ev("alloc", 2, b),
        ev("free_completed", 1, a),
        ev("free_completed", 2, b),
        ev("alloc", 3, c),
    ])
}

fn params() -> WhatIfParams {
    WhatIfParams::default()
}

#[test]
fn with_the_files_own_settings_it_equals_the_replay() {
    for file in [
        "torch2.0-flexgen-opt1.3b.pickle",
        "torch2.6-verl.pickle",
        "torch2.11-cs336-a2.pickle",
        "torch2.11-mini-fixture.pickle",
    ] {
        let o = run_path(&data(file)).unwrap();
        let w = o.whatif.unwrap();
        assert_eq!(
            w.reserved_peak_bytes, o.replay_reserved_peak_bytes,
            "{file}"
        );
        assert_eq!(
            w.reserved_final_bytes, o.replay_reserved_final_bytes,
            "{file}"
        );
        assert_eq!(w.ooms, 0, "{file}");
    }
    // The mini fixture frees no segment: every segment the replay created is still there, 14
    // as in the file.
    let o = run_path(&data("torch2.11-mini-fixture.pickle")).unwrap();
    assert_eq!(o.whatif.unwrap().segments_created, 14);
}

#[test]
fn the_files_settings_are_the_defaults_and_named() {
    let s = read_file(&data("torch2.6-verl.pickle")).unwrap();
    let (c, settings) = resolve(&s, &params());
    assert_eq!(c, crate::caching::AllocatorConfig::default());
    assert_eq!(
        settings.from_file,
        vec![
            "expandable_segments",
            "max_split_size_mb",
            "roundup_power2_divisions",
            "garbage_collection_threshold"
        ]
    );
    assert_eq!(settings.roundup_power2_divisions, vec![0; 16]);
    // A file recording `max_split_size` 64 MiB and 4 divisions from 2 MiB (bytes, as PyTorch
    // writes them): read back as such; a given parameter wins over the file.
    let mut s = trace(Vec::new());
    s.allocator_settings
        .insert("max_split_size".into(), (64 * M).to_string());
    s.allocator_settings
        .insert("roundup_power2_divisions".into(), "1:0,2:4,4:0".into());
    let (c, settings) = resolve(&s, &params());
    assert_eq!(c.max_split_size, 64 * M);
    assert_eq!(c.roundup_power2_divisions[1], 4);
    assert_eq!(settings.max_split_size_mb, Some(64));
    let given = WhatIfParams {
        max_split_size_mb: Some(0),
        ..params()
    };
    let (c, settings) = resolve(&s, &given);
    assert_eq!(c.max_split_size, u64::MAX);
    assert_eq!(settings.from_file, vec!["roundup_power2_divisions"]);
}

#[test]
fn expandable_segments_need_fewer_segments_and_less_reserved() {
    // 12 + 12 MiB then 24 MiB: separate segments 12 + 12 + 24 = 48 MiB in 3; one range grown
    // in 20 MiB pages: 40 MiB in 1 (the freed blocks merge across the range).
    let s = two_then_one(12 * M, 12 * M, 24 * M);
    let d = whatif(&s, &params()).unwrap();
    assert_eq!((d.reserved_peak_bytes, d.segments_created), (48 * M, 3));
    let on = WhatIfParams {
        expandable_segments: Some(true),
        ..params()
    };
    let e = whatif(&s, &on).unwrap();
    assert_eq!((e.reserved_peak_bytes, e.segments_created), (40 * M, 1));
    assert_eq!(e.fragmentation_final_bytes, 16 * M);
    // The mini fixture (one stream, from empty): at most one range per pool, fewer than the
    // replay's 14 segments.
    let s = read_file(&data("torch2.11-mini-fixture.pickle")).unwrap();
    let d = whatif(&s, &params()).unwrap();
    let e = whatif(&s, &on).unwrap();
    assert!(e.segments_created <= 2, "{}", e.segments_created);
    assert!(e.segments_created < d.segments_created);
}

#[test]
fn max_split_size_keeps_oversize_blocks_whole() {
    // 40 MiB freed, then 10 MiB: split from the cached block by default (40 MiB reserved); with
    // max_split_size_mb 32 a request under 32 MiB takes no oversize block: a new segment.
    let s = trace(vec![
        ev("alloc", 1, 40 * M),
        ev("free_completed", 1, 40 * M),
        ev("alloc", 2, 10 * M),
    ]);
    let d = whatif(&s, &params()).unwrap();
    let split = WhatIfParams {
        max_split_size_mb: Some(32),
        ..params()
    };
    let m = whatif(&s, &split).unwrap();
    assert_eq!((d.reserved_peak_bytes, d.segments_created), (40 * M, 1));
    assert_eq!((m.reserved_peak_bytes, m.segments_created), (50 * M, 2));
    // Under a 45 MiB limit the oversize block is released first and nothing runs out.
    let tight = WhatIfParams {
        device_memory_mib: 45,
        ..split
    };
    let t = whatif(&s, &tight).unwrap();
    assert_eq!((t.ooms, t.reserved_final_bytes), (0, 10 * M));
}

#[test]
fn power2_divisions_let_varying_sizes_reuse_one_block() {
    // 17 MiB freed, then 19 MiB: 18 + 20 MiB segments by default; with 4 divisions both round
    // to 20 MiB and the second reuses the first's block.
    let s = trace(vec![
        ev("alloc", 1, 17 * M),
        ev("free_completed", 1, 17 * M),
        ev("alloc", 2, 19 * M),
    ]);
    let d = whatif(&s, &params()).unwrap();
    let four = WhatIfParams {
        roundup_power2_divisions: Some(4),
        ..params()
    };
    let p = whatif(&s, &four).unwrap();
    assert_eq!((d.reserved_peak_bytes, d.segments_created), (38 * M, 2));
    assert_eq!((p.reserved_peak_bytes, p.segments_created), (20 * M, 1));
}

#[test]
fn garbage_collection_and_the_memory_limit() {
    // 30 + 30 MiB freed, then 40 MiB on a 100 MiB device: 100 MiB reserved; with a 0.5
    // threshold the two cached blocks (60 MiB > 50) are collected first: peak 60, final 40.
    let s = two_then_one(30 * M, 30 * M, 40 * M);
    let limit = WhatIfParams {
        device_memory_mib: 100,
        ..params()
    };
    let l = whatif(&s, &limit).unwrap();
    assert_eq!((l.reserved_peak_bytes, l.ooms), (100 * M, 0));
    let gc = WhatIfParams {
        garbage_collection_threshold: Some(0.5),
        ..limit
    };
    let g = whatif(&s, &gc).unwrap();
    assert_eq!(
        (g.reserved_peak_bytes, g.reserved_final_bytes),
        (60 * M, 40 * M)
    );
    // No limit, no collection (PyTorch collects only under a memory fraction).
    let no_limit = WhatIfParams {
        garbage_collection_threshold: Some(0.5),
        ..params()
    };
    assert_eq!(whatif(&s, &no_limit).unwrap().reserved_peak_bytes, 100 * M);
    // A 50 MiB device: B runs out (A is live: 60 > 50) — one OOM, its free skipped with it;
    // C then fits once A's cached 30 MiB segment is released: 40 MiB at the end.
    let small = WhatIfParams {
        device_memory_mib: 50,
        ..params()
    };
    let o = whatif(&s, &small).unwrap();
    assert_eq!((o.ooms, o.reserved_final_bytes), (1, 40 * M));
    // With A kept live, C does not fit even after the cache is freed.
    let s = trace(vec![
        ev("alloc", 1, 30 * M),
        ev("alloc", 3, 40 * M),
        ev("free_completed", 3, 40 * M),
    ]);
    let o = whatif(&s, &small).unwrap();
    assert_eq!((o.ooms, o.reserved_peak_bytes), (1, 30 * M));
    // cs336 needs ~12 GiB live at its peak: under 8 GiB it runs out.
    let s = read_file(&data("torch2.11-cs336-a2.pickle")).unwrap();
    let eight = WhatIfParams {
        device_memory_mib: 8192,
        ..params()
    };
    let w = whatif(&s, &eight).unwrap();
    assert!(w.ooms > 0);
    assert!(w.reserved_peak_bytes <= 8192 * M);
}

#[test]
fn parameters_are_checked_as_pytorch_checks_them() {
    let mut v = ParamValues::defaults(PARAMS);
    assert_eq!(WhatIfParams::from_values(&v).unwrap(), params());
    for (k, bad) in [
        ("max_split_size_mb", "20"),
        ("roundup_power2_divisions", "3"),
        ("garbage_collection_threshold", "1"),
    ] {
        v = ParamValues::defaults(PARAMS);
        // The spec refuses 1 (an open end); the scene the other two.
        let r = v
            .set(PARAMS, k, bad)
            .and_then(|()| WhatIfParams::from_values(&v).map(|_| ()));
        match r {
            Err(Error::InvalidParam { name, .. }) => assert_eq!(name, k),
            other => panic!("{k}={bad}: {other:?}"),
        }
    }
    v = ParamValues::defaults(PARAMS);
    v.set(PARAMS, "expandable_segments", "on").unwrap();
    v.set(PARAMS, "max_split_size_mb", "64").unwrap();
    let p = WhatIfParams::from_values(&v).unwrap();
    assert_eq!(
        (p.expandable_segments, p.max_split_size_mb),
        (Some(true), Some(64))
    );
}

#[test]
fn pytorchs_spellings_and_alloc_conf_text() {
    for (spelling, want) in [
        ("True", Some(true)),
        ("true", Some(true)),
        ("1", Some(true)),
        ("on", Some(true)),
        ("False", Some(false)),
        ("false", Some(false)),
        ("0", Some(false)),
        ("off", Some(false)),
        ("file", None),
    ] {
        let mut v = ParamValues::defaults(PARAMS);
        v.set(PARAMS, "expandable_segments", spelling).unwrap();
        let p = WhatIfParams::from_values(&v).unwrap();
        assert_eq!(p.expandable_segments, want, "{spelling}");
    }
    // alloc_conf sets what it names over the file's; a parameter that is not "file" wins.
    let mut v = ParamValues::defaults(PARAMS);
    v.set(
        PARAMS,
        "alloc_conf",
        "expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:4,garbage_collection_threshold:0.6,pinned_use_cuda_host_register:False",
    )
    .unwrap();
    v.set(PARAMS, "max_split_size_mb", "64").unwrap();
    let p = WhatIfParams::from_values(&v).unwrap();
    let s = read_file(&data("torch2.11-mini-fixture.pickle")).unwrap();
    let (c, settings) = resolve(&s, &p);
    assert!(c.expandable_segments);
    assert_eq!(c.max_split_size, 64 * M);
    assert_eq!(
        c.roundup_power2_divisions,
        [4; crate::caching::ROUNDUP_INTERVALS]
    );
    assert_eq!(c.garbage_collection_threshold, 0.6);
    assert_eq!(
        settings.from_alloc_conf,
        vec![
            "expandable_segments",
            "roundup_power2_divisions",
            "garbage_collection_threshold"
        ]
    );
    assert_eq!(
        settings.not_simulated,
        vec!["pinned_use_cuda_host_register"]
    );
    // Refusals name alloc_conf, and the key.
    for (text, value) in [
        ("bogus:1", "bogus"),
        ("expandable_segments:true", "expandable_segments:true"),
        ("max_split_size_mb:20", "max_split_size_mb:20"),
    ] {
        let mut v = ParamValues::defaults(PARAMS);
        v.set(PARAMS, "alloc_conf", text).unwrap();
        match WhatIfParams::from_values(&v) {
            Err(Error::InvalidParam {
                name, value: got, ..
            }) => {
                assert_eq!((name.as_str(), got.as_str()), ("alloc_conf", value));
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// Issue 30, item 11: a recorded setting PyTorch refuses is kept as written, warned about, and
/// the warning says what the replay uses; one unreadable setting leaves the others in force.
#[test]
fn recorded_settings_pytorch_refuses_are_warned_about_one_by_one() {
    let with = |pairs: &[(&str, &str)]| {
        let mut s = trace(Vec::new());
        for (k, v) in pairs {
            s.allocator_settings.insert((*k).into(), (*v).into());
        }
        s
    };
    // PyTorch's `parseGarbageCollectionThreshold` takes 0 < t < 1 only: 2.0, inf, NaN and −0.5
    // cannot have run; the replay runs without collection. 0 is PyTorch's recorded default.
    for t in ["2.0", "inf", "NaN", "-0.5", "1.0", "x"] {
        let s = with(&[("garbage_collection_threshold", t)]);
        let (c, settings) = resolve(&s, &params());
        assert_eq!(c.garbage_collection_threshold, 0.0, "{t}");
        assert!(settings.from_file.is_empty(), "{t}");
        let w = whatif::file_settings_warnings(&s);
        assert_eq!(
            w,
            [Warning::GcThresholdRefused {
                recorded: t.to_owned()
            }],
            "{t}"
        );
        assert!(
            w[0].text()
                .en
                .contains(&format!("garbage_collection_threshold {t} "))
                && w[0].text().en.contains("without garbage collection"),
            "{w:?}"
        );
    }
    for t in ["0.0", "0.6"] {
        let s = with(&[("garbage_collection_threshold", t)]);
        assert!(whatif::file_settings_warnings(&s).is_empty(), "{t}");
        let (c, _) = resolve(&s, &params());
        assert_eq!(
            c.garbage_collection_threshold.to_string(),
            t.trim_end_matches(".0")
        );
    }
    // 1 byte is simulated as 1 byte and reported as 1 byte (0 MiB rounded down), with a
    // warning: PyTorch refuses a limit of 20 MiB or less.
    let s = with(&[("max_split_size", "1")]);
    let (c, settings) = resolve(&s, &params());
    assert_eq!(c.max_split_size, 1);
    assert_eq!(settings.max_split_size_bytes, Some(1));
    assert_eq!(settings.max_split_size_mb, Some(0));
    let w = whatif::file_settings_warnings(&s);
    assert!(
        w == [Warning::SplitLimitRefused {
            recorded: "1".to_owned()
        }] && w[0].text().en.contains("uses 1 B as recorded"),
        "{w:?}"
    );
    // −1 is `SIZE_MAX` (unlimited): no warning; 64 MiB neither.
    for (t, bytes) in [("-1", None), ("67108864", Some(64 * M))] {
        let s = with(&[("max_split_size", t)]);
        assert!(whatif::file_settings_warnings(&s).is_empty(), "{t}");
        assert_eq!(resolve(&s, &params()).1.max_split_size_bytes, bytes, "{t}");
    }
    // 2⁷⁰ (a big integer, kept as its digits): that setting alone falls back to unlimited; the
    // threshold and divisions beside it are still the file's.
    let s = with(&[
        ("max_split_size", "1180591620717411303424"),
        ("garbage_collection_threshold", "0.5"),
        ("roundup_power2_divisions", "1:1180591620717411303424,2:4"),
    ]);
    let (c, settings) = resolve(&s, &params());
    assert_eq!(c.max_split_size, u64::MAX);
    assert_eq!(c.garbage_collection_threshold, 0.5);
    assert_eq!(c.roundup_power2_divisions[..3], [0, 4, 0]);
    assert_eq!(
        settings.from_file,
        vec!["roundup_power2_divisions", "garbage_collection_threshold"]
    );
    let w = whatif::file_settings_warnings(&s);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].text()
            .en
            .contains("max_split_size 1180591620717411303424 is not a byte count")
    );
    assert_eq!(
        w[1],
        Warning::RoundupEntriesRefused {
            entries: "1:1180591620717411303424".to_owned()
        }
    );
    assert!(w[1].text().en.contains("entries 1:1180591620717411303424 "));
    assert!(
        w.iter()
            .all(|w| w.text().zh.starts_with("allocator_settings："))
    );
}
