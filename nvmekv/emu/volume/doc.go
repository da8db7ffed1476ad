// Package volume divides one file, block device or NVM namespace into
// named extents, each the device of an emulated KV namespace of its own
// (nvmekv/emu on a dev.Window): a tenant's cold namespace, with its own
// log, index and reclaim, carved out of the volume's capacity when it is
// made (docs/DESIGN.md §3.5). On an NVM namespace an extent is a range of
// its LBAs. A table at the start of the volume names the extents; the
// volume does not know what its namespaces hold.
//
// # Invariants
//
//   - V1: a change of the table writes the copy of the next generation and
//     syncs it before it returns; Open takes the valid copy of the highest
//     generation, so a torn write leaves the table as it was before the
//     change (TestTornTableKeepsTheOther).
//   - V2: Create zeroes the new extent's first block before the table
//     names it, and Drop zeroes it before the table forgets it: an
//     emulated namespace made where one was dropped starts empty, never
//     with the dropped one's records (TestDroppedNamespaceStartsEmpty).
//   - V3: Check and Create refuse a name in use, a size past the longest
//     free run (ErrCapacity, naming it) and a full table, every problem
//     at once, and a refused Create writes nothing (TestCheckRefuses).
//   - V4: one process at a time has a volume open (flock); another Open
//     fails with ErrBusy at once (TestVolumeLocked).
//   - V5: an extent's device refuses every transfer outside the extent
//     before it is submitted (dev D8), so a namespace never reads or
//     writes another's bytes (TestWindowStaysInside).
//
// # Caveats
//
//   - Extents do not grow; the volume grows (a regular file, up to a
//     device's size), which adds free space at its end.
//   - Sync of any namespace syncs the whole file or device.
package volume
