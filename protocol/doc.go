// Package protocol is the exec-mode wire format: request lines read from the
// input FIFO, the frames written back for each request, the line reader that
// splits the input stream into requests, and the rule for reply FIFO names.
//
// It is pure: nothing here opens a file, starts a process or keeps state
// between calls, so every function can be fuzzed.
//
// Guarantees:
//
//   - A frame is exactly one line of JSON ending in "\n", whatever bytes it
//     carries: data that is not valid UTF-8 travels as base64.
//   - ParseRequest never returns an id longer than MaxIDLen or a reply name
//     that ValidReplyName refuses, even with an error.
//   - LineReader never holds more than its limit of one line, however long
//     the line or however the writer split it.
package protocol
