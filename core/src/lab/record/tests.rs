use super::*;
use crate::lab::examples::EXAMPLES;

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
