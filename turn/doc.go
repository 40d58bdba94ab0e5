// Package turn follows an interactive child's turns from the bytes it
// writes: whether it is ready for input (showing its prompt) or busy, and
// what one turn's answer is. It is the pure core of the agent's
// conversations (-prompt): it does no I/O, starts no goroutine and reads no
// clock; the caller passes every time in, and needs one timer, set to
// Deadline after each call.
//
// The child is ready when the text after its last newline, with carriage
// returns and terminal escape sequences removed, matches the prompt, or
// else an end of it does, the longest that does (output that did not end
// its line comes before the prompt on that line, "x>>> " after
// print("x", end=""), and is answer), and either its output has then
// stayed quiet for the settle period (DefaultSettle), or the caller sees
// that the child waits for input and says so (AtPrompt, then Settle). The
// whole line counts, however long, up to its last 1 MiB (maxLine), also
// where parts of it were handed on already. It is busy from the moment it
// is given input (Begin, Typed) until then, and a new Tracker (a new
// child) is busy until its first prompt. A turn's answer is what the
// child writes after Begin until it is ready again, less the echo of the
// input and the final prompt; in terminal mode "\r\n" becomes "\n", and
// escape sequences and carriage returns at a line's start are removed.
//
// Nothing of a turn waits for a newline: once the child has been quiet
// for the settle period (or the caller sees it wait for input:
// Unfinished, then Settle), a last line that is not the prompt is handed
// on as answer (the question a command waits on, "Enter name: ") and the
// turn goes on (flush.go). When the prompt then completes that line, what
// was handed on stays in the answer, and only what was still held of the
// prompt is Prompt.
//
// A child on pipes shows a prompt for each later line of a multi-line
// input as it reads it (python3's "... ... " for a block of three lines):
// those are no end, and not part of the answer. With a continuation prompt
// (Config.Continuation), the continuation prompt after the whole input,
// all those prompts shown, ends the turn as Incomplete: the child wants
// more input than it was given. The prompt that ends a turn tells how it
// went: its named groups (Groups), and the command's status (Status).
//
// Guarantees:
//
//   - The tracker never changes a byte it is given. Every byte given to
//     Output is handed back exactly once, in order, in one Segment that says
//     what it is (Answer, Noise, Echo, Prompt or Discarded): concatenating
//     the Data of every segment every method returned gives exactly the
//     concatenation of everything given to Output. How the output was cut
//     into calls at the same time changes nothing: the same bytes get the
//     same kinds, and End and Incomplete fall between the same two bytes.
//   - An answer is the concatenation of the Answer segments between Begin
//     and the turn's End or Incomplete (or Abandon, EOF or the next Begin):
//     the child's own bytes with some removed, never a byte added or
//     reordered. In terminal mode it holds no ESC byte and no "\r\n".
//   - Answers stream: a line is handed back as soon as its newline arrives,
//     and its unfinished end once quiet (see above), but for a turn's
//     first line on pipes that may be the echo of a child not yet known to
//     echo, which waits for the next line (see EchoAuto); only that and
//     the current line are held, until it is known what they are, and
//     never more than MaxHold bytes beyond one call's input. What the
//     current line shows is kept besides, up to maxLine bytes, for the
//     prompt to be matched against.
//   - Echo is removed only where the output shows the input as echoed: a
//     line that is not the input's line is answer. The echo of a later
//     line may follow a prompt: one the expressions match, or a
//     continuation prompt they need not match, up to 32 bytes of
//     punctuation and spaces that end with a space ("... ", "   ...> ",
//     "> "). On pipes (EchoAuto) it is removed once the child has shown
//     that it echoes: a turn's first output line that is its first input
//     line and is followed by more than the prompt (learn.go).
//   - A continuation prompt never makes the child ready, even where the
//     prompt expression matches it too.
//   - After Abandon or Incomplete, nothing the child writes reaches an
//     answer until it is ready again; output while it is ready, between
//     turns, is Discarded.
//   - AtPrompt and Unfinished change nothing, and Settle takes exactly the
//     prompt AtPrompt saw (the child is then ready, or its turn
//     incomplete), or hands on the line Unfinished saw.
//
// A Tracker is not safe for concurrent use: the caller serialises calls.
package turn
