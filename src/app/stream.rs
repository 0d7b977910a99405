//! Lints files on every core and hands each result on in path order as soon as it and every
//! file before it are done, so a report streams out and each file's text is dropped once
//! reported: memory is bounded by the files in flight, not by the run.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// How many results may wait for an earlier, slower file, per worker.
const AHEAD_PER_WORKER: usize = 32;

/// Calls `lint` on every file, on as many threads as the machine has cores, and `each` on the
/// results in the order of `files`. The first error from either stops the run and is returned.
pub fn in_order<T, E, L, F>(files: &[PathBuf], lint: L, mut each: F) -> Result<(), E>
where
    T: Send,
    E: Send,
    L: Fn(&PathBuf) -> Result<T, E> + Sync,
    F: FnMut(T) -> Result<(), E>,
{
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len());
    // One file (a pre-commit hook's usual call) or one core: no threads to start.
    if workers <= 1 {
        for f in files {
            each(lint(f)?)?;
        }
        return Ok(());
    }
    let window = workers * AHEAD_PER_WORKER;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // How many results `each` has taken: a worker waits before running more than `window`
    // files past it, so a slow file cannot make the others pile up behind it.
    let taken = Mutex::new(0usize);
    let moved = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, Result<T, E>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop, taken, moved, lint) = (&next, &stop, &taken, &moved, &lint);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= files.len() || stop.load(Ordering::Relaxed) {
                    return;
                }
                {
                    let mut t = taken.lock().unwrap_or_else(|p| p.into_inner());
                    while i >= *t + window && !stop.load(Ordering::Relaxed) {
                        t = moved.wait(t).unwrap_or_else(|p| p.into_inner());
                    }
                }
                if tx.send((i, lint(&files[i]))).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Result<T, E>> = BTreeMap::new();
        let mut done = 0usize;
        let mut outcome = Ok(());
        for (i, result) in rx.iter() {
            pending.insert(i, result);
            while let Some(result) = pending.remove(&done) {
                done += 1;
                let step = result.and_then(&mut each);
                {
                    *taken.lock().unwrap_or_else(|p| p.into_inner()) = done;
                }
                moved.notify_all();
                if let Err(e) = step {
                    outcome = Err(e);
                    stop.store(true, Ordering::Relaxed);
                    moved.notify_all();
                    break;
                }
            }
            if outcome.is_err() {
                break;
            }
        }
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_path_order_whatever_finishes_first() {
        let files: Vec<PathBuf> = (0..500).map(|i| PathBuf::from(format!("{i}"))).collect();
        let mut seen = Vec::new();
        in_order(
            &files,
            |p| {
                let i: u64 = p.to_str().unwrap().parse().unwrap();
                // Early files are the slow ones.
                std::thread::sleep(std::time::Duration::from_micros((500 - i) % 7 * 50));
                Ok::<_, ()>(i)
            },
            |i| {
                seen.push(i);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..500).collect::<Vec<_>>());
    }

    #[test]
    fn the_first_error_stops_the_run() {
        let files: Vec<PathBuf> = (0..200).map(|i| PathBuf::from(format!("{i}"))).collect();
        let mut seen = 0;
        let out = in_order(
            &files,
            |p| {
                let i: u64 = p.to_str().unwrap().parse().unwrap();
                if i == 50 {
                    Err(format!("bad {i}"))
                } else {
                    Ok(i)
                }
            },
            |_| {
                seen += 1;
                Ok(())
            },
        );
        assert_eq!(out, Err("bad 50".to_string()));
        assert_eq!(seen, 50);
    }
}
