package logstore

// TagOf is the index tag of device key k (tagOf). TEMPORARY until h/keyscan lands.
func TagOf(k *[16]byte) uint32 { return tagOf(k) }
