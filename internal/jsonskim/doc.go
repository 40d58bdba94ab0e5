// Package jsonskim finds where JSON values end without decoding them: a
// loop over their bytes that follows only strings and nesting. It serves
// readers of JSON that holds one entry per open session (the status
// file's "sessions", a list's answer), who want one entry, or a few
// fields of each: encoding/json checks and decodes a whole value first,
// at a cost that grows with the sessions open, where a skim costs a
// fraction of that and the decode only what is wanted.
//
// Guarantees: a skim never reads past the bytes it is given and fails
// (ErrNotJSON) on bytes that end inside the value skimmed, or whose
// nesting or members are not JSON's. It does not check what it skips
// inside strings, numbers and literals, nor what follows the value or
// the member it was after: the decoder of what is wanted checks that.
// Keys are compared as written, escapes and all.
package jsonskim
