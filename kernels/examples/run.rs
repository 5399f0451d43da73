//! Runs kernels on the preferred adapter and prints each `KernelRun` as JSON (one per line),
//! or with no arguments every kernel — until the app's `warpscope run KERNEL --json` exists.
//!
//! `cargo run -p warpscope-kernels --example run -- [KERNEL] [key=value]...`

use std::process::ExitCode;

use warpscope_kernels::{DeviceContext, RunOptions, kernel_names, run_kernel_with};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (names, sets): (Vec<&String>, Vec<&String>) = args.iter().partition(|a| !a.contains('='));
    let mut opts = RunOptions::default();
    for s in sets {
        if let Err(e) = opts.set(s) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    let ctx = match DeviceContext::open() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let names: Vec<String> = if names.is_empty() {
        kernel_names().into_iter().map(str::to_owned).collect()
    } else {
        names.into_iter().cloned().collect()
    };
    let mut ok = true;
    for name in names {
        match run_kernel_with(&name, &ctx, &opts) {
            Ok(run) => {
                ok &= run.verified;
                match serde_json::to_string(&run) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("error: {e}");
                        ok = false;
                    }
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
