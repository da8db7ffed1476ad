package server

import (
	"errors"
	"strconv"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/list"
)

// The error replies. Those redis-server has are its texts byte for byte.

const (
	// errWrongType is Redis's reply to a command of one type on a key of
	// another.
	errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt    = "ERR value is not an integer or out of range"
)

// tiercache's own replies, for what redis-server does not have.
const (
	errCorruptHash = "ERR server: a stored hash does not decode"
	errCorruptList = "ERR corrupt list value"
)

// replyError is an error a command's Update function returns to be
// answered as it is (cacheError): a RESP error line.
type replyError string

func (e replyError) Error() string { return string(e) }

// wrongType is errWrongType as an Update function's error.
const wrongType = replyError(errWrongType)

// The list commands' errors (LSET's, LINDEX's), as Update functions return them.
const (
	errNoSuchKey  = replyError("ERR no such key")
	errIndexRange = replyError("ERR index out of range")
	errNotInteger = replyError(errNotInt)
)

// cacheError answers err, an error of the cache or of a command's Update
// function.
func (c *conn) cacheError(err error) { c.w.Error(errorReply(err)) }

// errorReply is the reply to err.
func errorReply(err error) string {
	switch {
	case errors.Is(err, tier.ErrWrongKind):
		return errWrongType
	case errors.Is(err, hash.ErrCorrupt):
		return errCorruptHash
	case errors.Is(err, list.ErrCorrupt):
		return errCorruptList
	}
	if re, ok := errors.AsType[replyError](err); ok {
		return string(re)
	}
	if le, ok := errors.AsType[*hash.LimitError](err); ok {
		if le.Fields {
			return "ERR hash would have " + strconv.Itoa(le.N) + " fields, the limit (server.max_hash_fields) is " + strconv.Itoa(le.Limit)
		}
		return "ERR hash would take " + strconv.Itoa(le.N) + " bytes, the limit (max_value) is " + strconv.Itoa(le.Limit)
	}
	if le, ok := errors.AsType[*list.LimitError](err); ok {
		if le.Elements {
			return "ERR list would have " + strconv.Itoa(le.N) + " elements, the limit (server.max_list_elements) is " + strconv.Itoa(le.Limit)
		}
		return "ERR list would take " + strconv.Itoa(le.N) + " bytes, the limit (max_value) is " + strconv.Itoa(le.Limit)
	}
	return "ERR " + err.Error()
}
