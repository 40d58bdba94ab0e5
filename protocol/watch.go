package protocol

import "strconv"

// AppendWatching appends the frame that accepts a watch: the output frames
// that follow carry what the child writes from now on; pid is the child
// started last (0 before the first).
func AppendWatching(b []byte, id string, pid int) []byte {
	b = appendHead(b, id, FrameWatching)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	return append(b, "}\n"...)
}

// AppendLost appends the frame that tells a watcher that it lost n bytes
// of the output, where the frames before and after it meet.
func AppendLost(b []byte, id string, n int64) []byte {
	b = appendHead(b, id, FrameLost)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, "}\n"...)
}
