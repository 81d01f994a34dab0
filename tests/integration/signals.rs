//! Signals: SIGINT while a stream is stalled ends the run at once with exit 130.

use std::time::Duration;

use crate::support::{MockServer, PiCommand, Reply};

#[test]
fn sigint_during_stalled_stream_exits_130() {
    let api = "openai-completions";
    let mock =
        MockServer::with_replies([Reply::text(api, "a stream that stalls").stall_after(2, 20_000)]);
    let pi = PiCommand::for_mock(api, &mock).args(["-p", "hello"]);
    let child = pi.spawn();
    assert!(
        mock.wait_for_requests(1, Duration::from_secs(10)),
        "pi never sent its request"
    );
    // let the first events arrive so pi is blocked inside the stream
    std::thread::sleep(Duration::from_millis(200));
    child.signal(libc::SIGINT);
    let out = child.wait();
    out.assert_code(130).assert_no_panic();
    assert!(
        out.elapsed < Duration::from_secs(1),
        "took {:?} to exit after SIGINT",
        out.elapsed
    );
}
