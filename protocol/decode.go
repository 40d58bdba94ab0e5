package protocol

import (
	"encoding/json"
	"fmt"
)

// decodeLine reads the JSON object of line (without its newline) into a
// T, as every kind of line (a request, an ask, a control line) is read:
// first its seal, if it has one, is checked and taken off as framing
// (seal.go), so that no field of T is ever filled from the seal's keys
// and no key of the line's own is ever taken for one of them; then the
// rest is decoded, and refused as damaged if it gives a key twice
// (keys.go). what names the kind of line in an error ("request"). On
// error T is empty: the caller salvages the line's id and reply from its
// first bytes (SalvageHead).
func decodeLine[T any](line []byte, what string) (T, error) {
	var v T
	obj, err := unseal(line)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(obj, &v); err != nil {
		var empty T
		return empty, fmt.Errorf("invalid %s: %s", what, jsonError(err))
	}
	if err := checkKeys(obj); err != nil {
		var empty T
		return empty, err
	}
	return v, nil
}
