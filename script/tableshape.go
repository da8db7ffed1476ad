package script

import (
	"reflect"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua keeps no count of a table's entries, and Next and MaxN walk
// whatever a script once put in it, set to nil or not: a reused table
// (KEYS, ARGV, {ok="OK"}) that a script filled and emptied would make
// every later check of it that slow. The lengths of its array part and
// of its list of hash keys (every key ever set in the hash part, kept
// after it is deleted) tell in constant time that it holds no more than
// it was made with. They are read by reflection, with the field names of
// the gopher-lua in go.mod (TestTableShape); without them nothing is
// reused.
var shapeArray, shapeKeys = sliceField("array"), sliceField("keys")

func sliceField(name string) int {
	f, ok := reflect.TypeOf(lua.LTable{}).FieldByName(name)
	if !ok || f.Type.Kind() != reflect.Slice || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}

// tableShape returns the lengths of t's array part and of its hash keys'
// list; ok is false when this gopher-lua's LTable has no such fields.
func tableShape(t *lua.LTable) (array, keys int, ok bool) {
	if shapeArray < 0 || shapeKeys < 0 {
		return 0, 0, false
	}
	v := reflect.ValueOf(t).Elem()
	return v.Field(shapeArray).Len(), v.Field(shapeKeys).Len(), true
}
