package sched

import "time"

// mheap is a binary min-heap of model ids keyed by a time, with the position
// of every id kept so that a key can change in O(log M). A model is in the
// heap exactly when its key is not never. Keys sit beside the ids in the
// heap array so that sifting reads one array.
type mheap struct {
	e   []hentry
	pos []int32 // by model id: index in e, or -1
}

type hentry struct {
	key time.Duration
	id  ModelID
}

// ensure makes room for model ids below n.
func (h *mheap) ensure(n int) {
	for len(h.pos) < n {
		h.pos = append(h.pos, -1)
	}
}

// min returns the smallest key, or never when the heap is empty.
func (h *mheap) min() time.Duration {
	if len(h.e) == 0 {
		return never
	}
	return h.e[0].key
}

// key returns id's key, never when id is not in the heap.
func (h *mheap) key(id ModelID) time.Duration {
	if int(id) >= len(h.pos) || h.pos[id] < 0 {
		return never
	}
	return h.e[h.pos[id]].key
}

// top returns the id with the smallest key (heap not empty).
func (h *mheap) top() ModelID { return h.e[0].id }

// set gives id the key k; never removes it.
func (h *mheap) set(id ModelID, k time.Duration) {
	i := int(h.pos[id])
	if i < 0 {
		if k == never {
			return
		}
		h.e = append(h.e, hentry{key: k, id: id})
		h.up(len(h.e) - 1)
		return
	}
	old := h.e[i].key
	switch {
	case k == old:
	case k == never:
		h.remove(i)
	case k < old:
		h.e[i].key = k
		h.up(i)
	default:
		h.e[i].key = k
		h.down(i)
	}
}

func (h *mheap) remove(i int) {
	h.pos[h.e[i].id] = -1
	last := len(h.e) - 1
	if i == last {
		h.e = h.e[:last]
		return
	}
	moved := h.e[last]
	h.e = h.e[:last]
	h.e[i] = moved
	h.pos[moved.id] = int32(i)
	h.down(i)
	h.up(int(h.pos[moved.id]))
}

// up sifts the entry at i towards the root.
func (h *mheap) up(i int) {
	x := h.e[i]
	for i > 0 {
		p := (i - 1) / 2
		if h.e[p].key <= x.key {
			break
		}
		h.e[i] = h.e[p]
		h.pos[h.e[i].id] = int32(i)
		i = p
	}
	h.e[i] = x
	h.pos[x.id] = int32(i)
}

// down sifts the entry at i towards the leaves.
func (h *mheap) down(i int) {
	n := len(h.e)
	x := h.e[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.e[r].key < h.e[c].key {
			c = r
		}
		if x.key <= h.e[c].key {
			break
		}
		h.e[i] = h.e[c]
		h.pos[h.e[i].id] = int32(i)
		i = c
	}
	h.e[i] = x
	h.pos[x.id] = int32(i)
}

// due appends to dst every id whose key is at most t, using stack as scratch;
// it visits only those ids and their children.
func (h *mheap) due(t time.Duration, dst, stack []int32) ([]int32, []int32) {
	if len(h.e) == 0 || h.e[0].key > t {
		return dst, stack
	}
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dst = append(dst, int32(h.e[i].id))
		if c := 2*i + 1; int(c) < len(h.e) && h.e[c].key <= t {
			stack = append(stack, c)
		}
		if c := 2*i + 2; int(c) < len(h.e) && h.e[c].key <= t {
			stack = append(stack, c)
		}
	}
	return dst, stack
}
