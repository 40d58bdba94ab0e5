//go:build linux

package stream

import "sync"

// The copies of a child's output and of the input FIFO to a terminal read
// into buffers of a pool of their size: each is taken once bytes are
// there to read, and given back once they were delivered, so that an
// idle stream (a session that sits at its prompt) holds none. A pool
// lets the garbage collector have what stays unused.

// chunkPools holds one *sync.Pool of *[]byte per buffer size.
var chunkPools sync.Map

// takeChunk returns a buffer of size bytes, from its pool.
func takeChunk(size int) *[]byte {
	p, ok := chunkPools.Load(size)
	if !ok {
		p, _ = chunkPools.LoadOrStore(size, &sync.Pool{New: func() any {
			b := make([]byte, size)
			return &b
		}})
	}
	return p.(*sync.Pool).Get().(*[]byte)
}

// giveChunk gives b, from takeChunk, back to its pool; nothing may use it
// after.
func giveChunk(b *[]byte) {
	if p, ok := chunkPools.Load(len(*b)); ok {
		p.(*sync.Pool).Put(b)
	}
}
