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
//     the line or however the writer split it.
package protocol
