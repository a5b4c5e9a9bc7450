//! Child processes that do not outlive toolgate: agents run as commands, MCP servers, reset
//! commands.

use std::os::unix::process::CommandExt as _;

/// Prepares `command` so that its process cannot outlive toolgate: it gets a process group of
/// its own (group id = its pid), so that it and everything it starts can be killed together
/// (`killpg`), and, on Linux, the kernel sends it SIGKILL when toolgate dies
/// (`PR_SET_PDEATHSIG`), which covers a SIGKILL to toolgate that leaves no time to clean up.
///
/// The parent-death signal reaches the child itself, not the processes it starts; those are
/// reached by killing the group, which toolgate does on every way out it can handle (a normal
/// end, an error, Ctrl-C and SIGTERM).
pub(crate) fn contain(command: &mut std::process::Command) {
    command.process_group(0);
    die_with_parent(command);
}

/// Asks the kernel to SIGKILL `command`'s process when toolgate dies (Linux; elsewhere
/// nothing), without moving it out of toolgate's process group, for a child that should still
/// see a terminal's Ctrl-C.
#[allow(unsafe_code)]
pub(crate) fn die_with_parent(command: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        let parent = nix::unistd::Pid::this();
        // SAFETY: the closure runs in the forked child before `exec`; it makes two system
        // calls (prctl, getppid) and may `_exit`, all async-signal-safe, and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(std::io::Error::from)?;
                // toolgate died between the fork and the prctl: the signal will never come.
                if nix::unistd::getppid() != parent {
                    nix::libc::_exit(137);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM, which `timeout`, `docker stop`, CI cancellations
/// and MCP clients send first; a signal whose handler cannot be installed is never seen (the
/// process then stops on it as it would without toolgate's help). Needs a Tokio runtime.
pub(crate) async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    async fn on(kind: SignalKind) {
        match signal(kind) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
    tokio::select! {
        () = on(SignalKind::interrupt()) => {}
        () = on(SignalKind::terminate()) => {}
    }
}
