//! What a checkpoint costs a turn (`make bench`, issue 34): a generated repository of 10,000
//! files (2 KB each in 100 folders, with a `.gitignore`d build folder of 1,000 more) is
//! snapshotted as pi does before each prompt: once cold (the whole tree copied into the
//! store), then unchanged (the stat index vouches for every file), then with 5 files changed
//! between snapshots, then with one byte of a 100 MB binary file changed. Each is a median of
//! RUNS snapshots, logged as checkpoints. Prints one machine-readable line:
//!
//!   checkpoint_us files=10000 cold=<µs> walk=<µs> unchanged=<µs> changed5=<µs> big100mb=<µs>
//!
//!   cargo run --release --example checkpoint_bench [-- RUNS]

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]
use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::time::Instant;

use pi::harness::checkpoint::store::CheckpointKind;
use pi::harness::checkpoint::{CheckpointSettings, Checkpoints};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn timed(cps: &Checkpoints) -> f64 {
    let start = Instant::now();
    cps.record(CheckpointKind::BeforeTurn, Some("bench"), Some("entry"))
        .expect("checkpoint");
    start.elapsed().as_secs_f64() * 1e6
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let tmp = tempfile::tempdir().expect("temp dir");
    let ws = tmp.path().join("repo");
    let line = "let value = compute(input, options); // a line of ordinary source text\n";
    let body: String = line.repeat(2048 / line.len());
    for d in 0..100 {
        let dir = ws.join(format!("src/mod{d}"));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            fs::write(
                dir.join(format!("file{f}.rs")),
                format!("// {d}/{f}\n{body}"),
            )
            .unwrap();
        }
    }
    fs::create_dir_all(ws.join("target")).unwrap();
    for f in 0..1000 {
        fs::write(ws.join(format!("target/obj{f}.o")), &body).unwrap();
    }
    fs::write(ws.join(".gitignore"), "target/\n").unwrap();
    let settings = CheckpointSettings {
        enabled: true,
        ..Default::default()
    };
    let cps = Checkpoints::open(&tmp.path().join("agent"), &ws, settings);

    let cold = timed(&cps);
    // Past the racily-clean window of the cold snapshot.
    std::thread::sleep(std::time::Duration::from_millis(50));
    timed(&cps);
    let unchanged = median((0..runs).map(|_| timed(&cps)).collect());
    // The walk alone (what git status would also do): the floor under `unchanged`.
    let walk = median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                let limits = pi::harness::checkpoint::scan::Limits::default();
                pi::harness::checkpoint::scan::walk(&ws, &cps.store.root, &limits).unwrap();
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    );
    let changed5 = median(
        (0..runs)
            .map(|r| {
                for i in 0..5 {
                    let p = ws.join(format!("src/mod{}/file{}.rs", (r * 7 + i) % 100, i));
                    fs::write(&p, format!("// run {r}\n{body}")).unwrap();
                }
                timed(&cps)
            })
            .collect(),
    );
    let big = ws.join("assets.bin");
    let mut data = vec![0u8; 100 << 20];
    let mut x = 0x9e3779b97f4a7c15u64;
    for chunk in data.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    fs::write(&big, &data).unwrap();
    drop(data);
    timed(&cps);
    let big_runs = runs.clamp(1, 5);
    let big100mb = median(
        (0..big_runs)
            .map(|r| {
                let mut f = fs::OpenOptions::new().write(true).open(&big).unwrap();
                f.seek(SeekFrom::Start(((r as u64) * 4096) % (100 << 20)))
                    .unwrap();
                f.write_all(&[r as u8 ^ 0xa5]).unwrap();
                drop(f);
                timed(&cps)
            })
            .collect(),
    );
    println!(
        "checkpoint_us files=10000 cold={cold:.0} walk={walk:.0} unchanged={unchanged:.0} changed5={changed5:.0} big100mb={big100mb:.0}"
    );
}
