package logstore

// DumpKey reports, through logf, every valid record of key in a store's
// image (the device's bytes from offset 0) and where each region's walk
// ended: a diagnostic for crash tests and for reading a damaged store by
// hand. An image without a superblock reports nothing.
func DumpKey(img []byte, key []byte, logf func(format string, args ...any)) {
	sb, ok, err := parseSuperblock(img)
	if !ok || err != nil {
		logf("no superblock: %v", err)
		return
	}
	R := int(sb.regionBytes)
	for r := 0; blockBytes+(r+1)*R <= len(img); r++ {
		reg := img[blockBytes+r*R : blockBytes+(r+1)*R]
		seq := sb.regionSeq(reg)
		end, low, torn := walkRegion(reg, seq, R, func(off int, rc *rec) {
			if string(rc.key[:rc.klen]) == string(key) {
				v := rc.value(reg, off)
				logf("region %d seq %d off %d kind %d value %d bytes %x", r, seq, off, rc.kind, len(v), v[:min(len(v), 8)])
			}
		})
		logf("region %d seq %d end %d low %d torn %v", r, seq, end, low, torn)
	}
}
