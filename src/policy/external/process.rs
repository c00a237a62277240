//! The process side of an external policy: start it (in its own process group, pinned to a CPU
//! where the system allows), write and read lines with a deadline, and kill its whole group.
//! Unix only: the pipes are set non-blocking (`fcntl`) and waited on with `poll`; reads and
//! writes are std's. CPU pinning is Linux only and skipped elsewhere.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{ExternalSpec, Io};

/// The protocol version this build speaks.
pub(super) const MAX_LINE: usize = 16 << 20;
pub(super) const STDERR_LINES: usize = 20;

/// A running policy process and the unread part of its stdout.
pub(super) struct Process {
    pub(super) child: Child,
    pub(super) stdin: ChildStdin,
    pub(super) stdout: ChildStdout,
    pub(super) buf: Vec<u8>,
    /// Bytes of `buf` before this offset are consumed.
    pub(super) start: usize,
    pub(super) stderr: Arc<Mutex<VecDeque<String>>>,
    /// The process asked for every view array with every `decide` (`"view": "full"` in hello).
    pub(super) full_view: bool,
    /// The CPU the process is pinned to; the worker thread talking to it pins itself there too.
    pub(super) cpu: Option<usize>,
}

/// The CPUs this program may run on, as it started (before any thread pinned itself).
#[cfg(target_os = "linux")]
pub(super) static ALLOWED_CPUS: std::sync::LazyLock<Vec<usize>> = std::sync::LazyLock::new(|| {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
});
/// Elsewhere no CPU is pinned (pinning is a Linux call).
#[cfg(not(target_os = "linux"))]
pub(super) static ALLOWED_CPUS: std::sync::LazyLock<Vec<usize>> =
    std::sync::LazyLock::new(Vec::new);
pub(super) static NEXT_CPU: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Pin a process (`pid`) or the calling thread (`pid = 0`) to one CPU; best effort.
#[cfg(target_os = "linux")]
pub(super) fn pin(pid: libc::pid_t, cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; one CPU is added before it is passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Pinning is a Linux call; elsewhere nothing is pinned.
#[cfg(not(target_os = "linux"))]
pub(super) fn pin(_pid: libc::pid_t, _cpu: usize) {}

pub(super) fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a file descriptor this process owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Wait until `fd` is ready for `events` or `deadline` passes.
pub(super) fn wait_for(fd: RawFd, events: libc::c_short, deadline: Instant) -> Result<(), Io> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Io::Timeout);
        }
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        let mut p = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd, its count, and a timeout.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r > 0 {
            return Ok(());
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(Io::Os(e));
            }
        }
    }
}

impl Process {
    pub(super) fn spawn(spec: &ExternalSpec) -> Result<Process, String> {
        let Some((program, args)) = spec.command.split_first() else {
            return Err("its `command` is empty".to_string());
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so that ending the policy ends whatever it started too.
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start `{}`: {e} (check `command` in the experiment file; it runs in the current directory)",
                    spec.command.join(" ")
                )
            })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_all(&mut child);
            let _ = child.wait();
            return Err("the process's pipes could not be opened".to_string());
        };
        // A decision is a round trip between the worker thread and the process: on one CPU it is
        // a context switch, across two it waits for a sleeping CPU to wake (`pin_cpu`).
        let cpu = if spec.pin_cpu && ALLOWED_CPUS.len() > 1 {
            let cpus = &*ALLOWED_CPUS;
            let c = cpus[NEXT_CPU.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % cpus.len()];
            pin(child.id() as libc::pid_t, c);
            Some(c)
        } else {
            None
        };
        for fd in [stdin.as_raw_fd(), stdout.as_raw_fd()] {
            if let Err(e) = set_nonblocking(fd) {
                kill_all(&mut child);
                let _ = child.wait();
                return Err(format!("cannot set up the process's pipes: {e}"));
            }
        }
        // The last lines of stderr are kept for error messages; a thread drains the pipe so the
        // process never blocks on a full stderr.
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let sink = tail.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut t) = sink.lock() {
                    if t.len() == STDERR_LINES {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
        });
        Ok(Process {
            child,
            stdin,
            stdout,
            buf: Vec::with_capacity(4096),
            start: 0,
            stderr: tail,
            full_view: false,
            cpu,
        })
    }

    pub(super) fn send(&mut self, mut data: &[u8], deadline: Instant) -> Result<(), Io> {
        let fd = self.stdin.as_raw_fd();
        while !data.is_empty() {
            // std's write on the non-blocking pipe: WouldBlock when it is full.
            let e = match self.stdin.write(data) {
                Ok(0) => return Err(Io::Closed),
                Ok(n) => {
                    data = &data[n..];
                    continue;
                }
                Err(e) => e,
            };
            match e.kind() {
                std::io::ErrorKind::WouldBlock => wait_for(fd, libc::POLLOUT, deadline)?,
                std::io::ErrorKind::Interrupted => {}
                std::io::ErrorKind::BrokenPipe => return Err(Io::Closed),
                _ => return Err(Io::Os(e)),
            }
        }
        Ok(())
    }

    /// The next line the process wrote, without its line end.
    pub(super) fn recv(&mut self, deadline: Instant) -> Result<&[u8], Io> {
        let fd = self.stdout.as_raw_fd();
        let mut scanned = self.start;
        loop {
            if let Some(i) = self.buf[scanned..].iter().position(|&b| b == b'\n') {
                let end = scanned + i;
                let line_start = self.start;
                self.start = end + 1;
                return Ok(&self.buf[line_start..end]);
            }
            scanned = self.buf.len();
            if self.start > 0 {
                self.buf.drain(..self.start);
                scanned -= self.start;
                self.start = 0;
            }
            if self.buf.len() > MAX_LINE {
                return Err(Io::TooLong);
            }
            let len = self.buf.len();
            self.buf.resize(len + 65536, 0);
            // std's read on the non-blocking pipe: WouldBlock when nothing is there yet.
            let got = self.stdout.read(&mut self.buf[len..]);
            let e = match got {
                Ok(0) => {
                    self.buf.truncate(len);
                    return Err(Io::Closed);
                }
                Ok(n) => {
                    self.buf.truncate(len + n);
                    continue;
                }
                Err(e) => {
                    self.buf.truncate(len);
                    e
                }
            };
            match e.kind() {
                std::io::ErrorKind::WouldBlock => wait_for(fd, libc::POLLIN, deadline)?,
                std::io::ErrorKind::Interrupted => {}
                _ => return Err(Io::Os(e)),
            }
        }
    }

    /// How the process ended, waiting up to a second for it to do so.
    pub(super) fn status(&mut self) -> String {
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => {
                    use std::os::unix::process::ExitStatusExt;
                    return match (s.code(), s.signal()) {
                        (Some(c), _) => format!("exited with status {c}"),
                        (None, Some(sig)) => format!("was killed by signal {sig}"),
                        _ => format!("ended ({s})"),
                    };
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                Ok(None) => return "is still running (it will be killed)".to_string(),
                Err(e) => return format!("cannot be waited for: {e}"),
            }
        }
    }

    pub(super) fn stderr_tail(&self) -> Vec<String> {
        // Give the draining thread a moment to catch the last lines of a crash.
        std::thread::sleep(Duration::from_millis(50));
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// End a policy's process and every process it started (its process group).
pub(super) fn kill_all(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads (it
        // was spawned with process_group(0)); it touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

impl Drop for Process {
    fn drop(&mut self) {
        kill_all(&mut self.child);
        let _ = self.child.wait();
    }
}
