//! A child MCP server over stdio, its answers read through a [`TapReader`].

use std::{future::Future, io, process::Stdio, time::Duration};

use nix::{
    sys::signal::{Signal, kill},
    unistd::Pid,
};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{Transport, async_rw::AsyncRwTransport},
};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::wire_tap::{ListingTap, TapReader, TapWriter};

/// How long a child server gets to exit after its stdin closes, and again after `SIGTERM`
/// (the MCP stdio shutdown sequence: close stdin, wait, `SIGTERM`, wait, kill).
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A spawned child server as an rmcp client transport. Dropping it kills the child.
pub(super) struct ChildTransport {
    child: Option<Child>,
    transport: AsyncRwTransport<RoleClient, TapReader<ChildStdout>, TapWriter<ChildStdin>>,
}

impl ChildTransport {
    /// Spawns `command` with piped stdin, stdout and stderr; returns the transport and the
    /// child's stderr.
    ///
    /// # Errors
    /// The spawn error (e.g. `NotFound` for a missing program).
    pub(super) fn spawn(
        mut command: Command,
        tap: ListingTap,
    ) -> io::Result<(Self, Option<ChildStderr>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(io::Error::other("the child's stdio was not piped"));
        };
        let stderr = child.stderr.take();
        let transport = AsyncRwTransport::new_client(
            TapReader::new(stdout, tap.clone()),
            TapWriter::new(stdin, tap),
        );
        let child = Some(child);
        Ok((Self { child, transport }, stderr))
    }

    /// The child's process id while it runs.
    pub(super) fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Closes the child's stdin and waits for it to exit; then `SIGTERM`, then kill.
    async fn shut_down(&mut self) -> io::Result<()> {
        self.transport.close().await?;
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        if exited_within(child, EXIT_GRACE).await? {
            self.child = None;
            return Ok(());
        }
        if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
            // `child.id()` is `None` once the child is reaped, so `pid` is still ours. A failed
            // signal (the child exited meanwhile) leaves the kill below to settle it.
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            if exited_within(child, EXIT_GRACE).await? {
                self.child = None;
                return Ok(());
            }
        }
        child.kill().await?;
        self.child = None;
        Ok(())
    }
}

/// Whether `child` exits within `grace`.
async fn exited_within(child: &mut Child, grace: Duration) -> io::Result<bool> {
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(status) => status.map(|_| true),
        Err(_elapsed) => Ok(false),
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shut_down()
    }
}
