package testserver

// keyIndex is a memory-store shard's index from key hashes to entries: a hash table with open
// addressing and linear probing, whose slots hold the hash and the entry.
//
// Why not a Go map: the hashes are already uniform (see MemoryStore.keyHash), so a slot is found
// from the hash's low bits directly, where a map[uint64]*memEntry hashes the hash again and probes
// its control bytes; a lookup costs about 4 ns instead of 15 on the development VM, a tenth of a
// decision. Entries of equal hash (which the store's tests force) simply occupy successive slots:
// a lookup compares the key of every slot with its hash until an empty slot.
//
// The table doubles when it is three quarters full, so a lookup probes about 2.5 slots on average
// when it misses and 1.5 when it hits (Knuth's linear-probing figures), and it holds at most the
// shard's cap of entries. A removal shifts back the slots that follow it (no tombstones), so the
// probe sequences stay as short as if the removed entry had never been there. It is guarded by
// its shard's lock.
type keyIndex struct {
	slots []indexSlot // a power of two of them, or none
	n     int         // slots in use
}

// indexSlot is one slot of a keyIndex; entry is nil in an empty slot.
type indexSlot struct {
	hash  uint64
	entry *memEntry
}

// minIndexSlots is the size of a shard's first table.
const minIndexSlots = 8

// mask returns the slot index mask: len(slots)-1.
func (x *keyIndex) mask() uint64 { return uint64(len(x.slots) - 1) }

// insert adds e, of hash e.hash, which the index does not hold.
func (x *keyIndex) insert(e *memEntry) {
	if 4*(x.n+1) > 3*len(x.slots) {
		x.grow()
	}
	x.place(indexSlot{hash: e.hash, entry: e})
	x.n++
}

// place puts s in the first empty slot of its probe sequence.
func (x *keyIndex) place(s indexSlot) {
	mask := x.mask()
	i := s.hash & mask
	for x.slots[i].entry != nil {
		i = (i + 1) & mask
	}
	x.slots[i] = s
}

// grow doubles the table (or makes the first one) and places every entry again.
func (x *keyIndex) grow() {
	old := x.slots
	x.slots = make([]indexSlot, max(2*len(old), minIndexSlots))
	for _, s := range old {
		if s.entry != nil {
			x.place(s)
		}
	}
}

// remove removes e, which the index holds.
func (x *keyIndex) remove(e *memEntry) {
	mask := x.mask()
	i := e.hash & mask
	for x.slots[i].entry != e {
		i = (i + 1) & mask
	}
	// Shift back every following slot of the run whose home (the slot its hash points at) is not
	// cyclically within (i, j]: its probe sequence passed through i.
	for j := (i + 1) & mask; x.slots[j].entry != nil; j = (j + 1) & mask {
		home := x.slots[j].hash & mask
		if (i < j && i < home && home <= j) || (j < i && (i < home || home <= j)) {
			continue
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.slots[i] = indexSlot{}
	x.n--
}

// reset empties the index and releases its table.
func (x *keyIndex) reset() { *x = keyIndex{} }
