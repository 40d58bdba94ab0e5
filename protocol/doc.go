// Package protocol is the wire format of exec mode and of conversations:
// request lines read from the input FIFO and ask lines read from DIR/ask,
// the frames written back for each (an ask's end frame carries how its
// turn ended: ready, incomplete or timed out, and its prompt's named
// groups), the line reader that splits the input stream into requests, and
// the rule for reply FIFO names.
//
// It is pure: nothing here opens a file, starts a process or keeps state
// between calls, so every function can be fuzzed.
//
// Guarantees:
//
//   - A frame is exactly one line of JSON ending in "\n", whatever bytes it
//     carries: data that is not valid UTF-8 travels as base64, and in
//     strings (ids, messages, a prompt's groups) is replaced. No object
//     has a key twice.
//   - ParseRequest never returns an id longer than MaxIDLen or a reply name
//     that ValidReplyName refuses, even with an error.
//   - LineReader never holds more than its limit of one line, however long
//     the line or however the writer split it; over a Waiter (a FIFO the
//     agent reads) it holds no buffer at all while it waits for bytes.
//   - No sealed line that holds bytes of two writers is taken (seal.go):
//     a line that begins with a seal must match it (its size and the
//     SHA-256 of its bytes, which WireLine writes for every line over
//     MaxUnsealed bytes), and no JSON line may give a key twice, as
//     encoding/json matches keys (keys.go). Such a line is refused with
//     ErrDamaged, and the reply it names is only that of its first
//     MaxUnsealed bytes, one writer's atomic write. A long line without a
//     seal is taken as the exec protocol has always taken it: its writer
//     vouches for nothing.
//   - A seal is framing: it is checked and taken off before a line's own
//     keys are read, in one place for requests, asks and control lines
//     (decode.go), so no field of a line is ever read from the seal, and
//     a line's own "size" (a control line's terminal size) is never taken
//     for the seal's, nor the seal's for it.
//
// It does not keep a writer from cutting another's long line short or
// putting bytes into it: the kernel lets any writer of a FIFO do that.
// It makes sure that such a line is refused, never run with the other
// writer's reply or text.
package protocol
