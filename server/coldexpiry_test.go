package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tiercache/tiercache/value/hash"
)

// TestColdHashWithFieldExpiryReadsItsPieces is S47: a 10,000-field hash
// with field expiries (a record of hash's second version) that only the
// cold tier holds is stored in pieces too, each field with its expiry:
// HGET, HMGET, HEXISTS, HSTRLEN, HPEXPIRETIME and HTTL of a few fields
// read a few 4 KiB blocks, HLEN the table and the pieces with an expiry;
// an expired field is answered by none of them, nor by HGETALL (one
// submission of every piece); every answer is the one the whole hash
// gives.
func TestColdHashWithFieldExpiryReadsItsPieces(t *testing.T) {
	tc, store, path := openPiecesServer(t, nil)
	now := tc.Now() / 1e6
	later := now + 3600_000
	fields := make([]hash.Field, 10000)
	var live []hash.Field
	for i := range fields {
		fields[i] = hash.Field{Name: []byte(fmt.Sprint("field:", i)), Value: []byte(fmt.Sprint("value-", i))}
		switch {
		case i%1000 == 13 && i < 3000:
			fields[i].Expiry = now - 60_000 // expired, not yet purged
			continue
		case i%1000 == 11 && i < 3000, i == 4711:
			fields[i].Expiry = later
		}
		live = append(live, fields[i])
	}
	rec := hash.Encode(nil, fields)
	if !hash.HasTTL(rec) {
		t.Fatal("the record is not of the second version")
	}
	putColdAlone(t, tc, map[string][]byte{"ttlhash": rec})
	read := emulatedRead(store)
	r := dialExact(t, path)
	readsFewBlocks(t, r, read, []pieceRead{
		{[]string{"HGET", "ttlhash", "field:4711"}, "$10\r\nvalue-4711\r\n", 5},
		{[]string{"HGET", "ttlhash", "field:77"}, "$8\r\nvalue-77\r\n", 5},
		{[]string{"HGET", "ttlhash", "field:13"}, "$-1\r\n", 5},
		{[]string{"HMGET", "ttlhash", "field:1013", "field:11", "field:77"}, "*3\r\n$-1\r\n$8\r\nvalue-11\r\n$8\r\nvalue-77\r\n", 11},
		{[]string{"HEXISTS", "ttlhash", "field:2013"}, ":0\r\n", 5},
		{[]string{"HEXISTS", "ttlhash", "field:2011"}, ":1\r\n", 5},
		{[]string{"HSTRLEN", "ttlhash", "field:2013"}, ":0\r\n", 5},
		{[]string{"HPEXPIRETIME", "ttlhash", "FIELDS", "4", "field:4711", "field:77", "field:13", "nofield"},
			"*4\r\n:" + strconv.FormatInt(later, 10) + "\r\n:-1\r\n:-2\r\n:-2\r\n", 14},
		{[]string{"HTTL", "ttlhash", "FIELDS", "0", "field:1"}, "-" + errNumFieldsPositive + "\r\n", 3},
		{[]string{"HLEN", "ttlhash"}, ":" + strconv.Itoa(len(live)) + "\r\n", 17},
	})
	got := r.do("HTTL", "ttlhash", "FIELDS", "2", "field:1011", "field:1013")
	var secs int64
	if _, err := fmt.Sscanf(got, "*2\r\n:%d\r\n:-2\r\n", &secs); err != nil || secs < 3000 || secs > 3600 {
		t.Fatalf("HTTL: %q, want about 3600 then -2", got)
	}
	checkHGetAll(t, r, "ttlhash", live)
	if got := r.do("HGET", "ttlhash", "field:13"); !strings.HasPrefix(got, "$-1") {
		t.Fatalf("HGET of an expired field after HGETALL: %q", got)
	}
}
