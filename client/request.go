//go:build linux

package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/fifobridge/fifobridge/protocol"
)

// requestLine encodes one request as it is written to the input FIFO (args,
// when there are any, in order), by protocol.WireLine: a newline first,
// so that a fragment an earlier writer left unterminated ends there (the
// agent skips the blank line that is left when there is none), then the
// JSON object, sealed when it does not fit one atomic write, and its
// newline.
func requestLine(id, reply string, stdin []byte, args []string, limit time.Duration) ([]byte, error) {
	r := protocol.Request{ID: id, Reply: reply, Args: args}
	if utf8.Valid(stdin) {
		r.Stdin = string(stdin)
	} else {
		r.StdinB64 = stdin
	}
	if limit > 0 {
		r.Timeout = limit.String()
	}
	return encodeLine(r)
}

// encodeLine encodes v, a request or an ask, as protocol.WireLine writes
// it. Without HTML escaping, '<', '>' and '&' take one byte, not six, so
// what fits -max-request as stdin fits as a request.
func encodeLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode request line: %w", err)
	}
	return protocol.WireLine(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}
