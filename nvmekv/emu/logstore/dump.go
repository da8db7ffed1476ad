package logstore

// DumpKey reports, through logf, every valid record of key in a store's
// image (the device's bytes from offset 0) and where each region's walk
// ended: a diagnostic for crash tests and for reading a damaged store by
// hand. A region a Clear emptied (its seq below the superblock's clear
// seq, E34) is marked cleared: Open ignores its records. An image
// without a superblock reports nothing.
func DumpKey(img []byte, key []byte, logf func(format string, args ...any)) {
	sb, ok, err := parseSuperblock(img)
	if !ok || err != nil {
		logf("no superblock: %v", err)
		return
	}
	R := int(sb.regionBytes)
	logf("superblock version %d clear seq %d", sb.version, sb.clearSeq)
	for r := 0; blockBytes+(r+1)*R <= len(img); r++ {
		reg := img[blockBytes+r*R : blockBytes+(r+1)*R]
		seq := sb.regionSeq(reg)
		cleared := seq != 0 && seq < sb.clearSeq
		end, low, torn := walkRegion(reg, seq, R, func(off int, rc *rec) {
			if string(rc.key[:rc.klen]) == string(key) {
				v := rc.value(reg, off)
				logf("region %d seq %d (cleared %v) off %d kind %d value %d bytes %x", r, seq, cleared, off, rc.kind, len(v), v[:min(len(v), 8)])
			}
		})
		logf("region %d seq %d (cleared %v) end %d low %d torn %v", r, seq, cleared, end, low, torn)
	}
}
