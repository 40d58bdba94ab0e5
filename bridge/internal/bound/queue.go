//go:build linux

package bound

// Queue holds what waits in the agent, in arrival order, at most limit
// of it. It is not safe for concurrent use: its owner serialises calls.
type Queue[T any] struct {
	limit int
	items []T
}

// NewQueue returns an empty queue of at most limit.
func NewQueue[T any](limit int) *Queue[T] {
	return &Queue[T]{limit: limit}
}

// Put adds x at the end and reports true, or reports false and adds
// nothing when limit wait already.
func (q *Queue[T]) Put(x T) bool {
	if len(q.items) >= q.limit {
		return false
	}
	q.items = append(q.items, x)
	return true
}

// Len is how many wait.
func (q *Queue[T]) Len() int { return len(q.items) }

// Head returns the first, if any.
func (q *Queue[T]) Head() (T, bool) {
	if len(q.items) == 0 {
		var zero T
		return zero, false
	}
	return q.items[0], true
}

// Pop removes the first; the queue must not be empty.
func (q *Queue[T]) Pop() T {
	x := q.items[0]
	var zero T
	q.items[0] = zero
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // a drained queue lets its array go
	}
	return x
}

// Remove takes out, in order, every one that take says to take, and
// returns them.
func (q *Queue[T]) Remove(take func(T) bool) []T {
	var taken []T
	kept := q.items[:0]
	for _, x := range q.items {
		if take(x) {
			taken = append(taken, x)
		} else {
			kept = append(kept, x)
		}
	}
	clear(q.items[len(kept):])
	q.items = kept
	return taken
}

// Drain empties the queue and returns what waited.
func (q *Queue[T]) Drain() []T {
	items := q.items
	q.items = nil
	return items
}

// Each calls f with each, in order.
func (q *Queue[T]) Each(f func(T)) {
	for _, x := range q.items {
		f(x)
	}
}
