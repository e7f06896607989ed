//! Real exchange messages from the shared sample corpus, framed as a server
//! sends them and decoded in irregular chunks. Skips cleanly when the corpus
//! is not beside the project.

use std::path::{Path, PathBuf};

use tickwire_codec::{Config, OpCode, Role, encode_frame};

use crate::util::{Ev, Outcome, decoder, run};

fn samples_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/samples");
    dir.is_dir().then_some(dir)
}

fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            jsonl_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

#[test]
fn exchange_messages_survive_irregular_chunking() {
    let Some(dir) = samples_dir() else {
        eprintln!("skipped: ../shared/samples is absent");
        return;
    };
    let mut files = Vec::new();
    jsonl_files(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no .jsonl files under {}", dir.display());
    let mut total = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).take(2000).collect();
        let mut stream = Vec::new();
        let mut frame = vec![0u8; 1 << 22];
        for line in &lines {
            let n = encode_frame(&mut frame, OpCode::Text, true, line.as_bytes(), None).unwrap();
            stream.extend_from_slice(&frame[..n]);
        }
        let expected: Vec<Ev> = lines.iter().map(|l| Ev::Text(l.to_string())).collect();
        for (chunks, input_capacity) in
            [(&[1460usize, 17, 3, 700][..], 0), (&[4096, 1][..], 1 << 16)]
        {
            let config = Config {
                input_capacity,
                ..Config::default()
            };
            let out = run(&mut decoder(Role::Client, config, 1 << 22), &stream, chunks);
            assert_eq!(
                out,
                Outcome {
                    events: expected.clone(),
                    error: None
                },
                "{}",
                file.display()
            );
        }
        total += lines.len();
    }
    assert!(total > 1000, "only {total} sample messages");
}
