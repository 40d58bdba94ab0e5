//go:build linux

package client

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/fifobridge/fifobridge/protocol"
)

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
