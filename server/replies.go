package server

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/tiercache/tiercache/tier"
	"github.com/tiercache/tiercache/value"
	"github.com/tiercache/tiercache/value/hash"
	"github.com/tiercache/tiercache/value/hll"
	"github.com/tiercache/tiercache/value/list"
	"github.com/tiercache/tiercache/value/set"
	"github.com/tiercache/tiercache/value/zset"
)

// Every error reply the server writes is here, once: no other file of the
// package spells one (TestRepliesLiveInRepliesGo). Those redis-server has
// are its texts byte for byte: each string below down to "redis-server
// 7.2's" is found in the redis-server 7.0 binary, a parameter's place
// aside (TestRepliesAreRedisTexts), and the peer tests compare the
// replies.

// redis-server's replies.
const (
	errWrongType       = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt          = "ERR value is not an integer or out of range"
	errSyntax          = "ERR syntax error"
	errNoAuth          = "NOAUTH Authentication required."
	errWrongPass       = "WRONGPASS invalid username-password pair or user is disabled."
	errNoProto         = "NOPROTO unsupported protocol version"
	errProtoVersion    = "ERR Protocol version is not an integer or out of range"
	errNoPassword      = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errClientName      = "ERR Client names cannot contain spaces, newlines or special characters."
	errDBIndex         = "ERR DB index is out of range"
	errSwapDBFirst     = "ERR invalid first DB index"
	errSwapDBSecond    = "ERR invalid second DB index"
	errMaxClients      = "ERR max number of clients reached"
	errLoading         = "LOADING Redis is loading the dataset in memory"
	errMultiNested     = "ERR MULTI calls can not be nested"
	errExecNoMulti     = "ERR EXEC without MULTI"
	errDiscardNoMulti  = "ERR DISCARD without MULTI"
	errExecAbort       = "EXECABORT Transaction discarded because of previous errors."
	errWatchInMulti    = "ERR WATCH inside MULTI is not allowed"
	errNoSuchKeyText   = "ERR no such key"
	errSameObject      = "ERR source and destination objects are the same"
	errInvalidCursor   = "ERR invalid cursor"
	errNXAndXXGTLT     = "ERR NX and XX, GT or LT options at the same time are not compatible"
	errGTAndLT         = "ERR GT and LT options at the same time are not compatible"
	errOverflow        = "ERR increment or decrement would overflow"
	errDecrOverflow    = "ERR decrement would overflow"
	errNotFloat        = "ERR value is not a valid float"
	errFloatNaNInf     = "ERR increment would produce NaN or Infinity"
	errHashNotInt      = "ERR hash value is not an integer"
	errHashNotFloat    = "ERR hash value is not a float"
	errValueNaNInf     = "ERR value is NaN or Infinity"
	errValueRange      = "ERR value is out of range"
	errMustBePositive  = "ERR value is out of range, must be positive"
	errOffsetRange     = "ERR offset is out of range"
	errBitOffset       = "ERR bit offset is not an integer or out of range"
	errBitValue        = "ERR bit is not an integer or out of range"
	errBitArg          = "ERR The bit argument must be 1 or 0."
	errBitopNot        = "ERR BITOP NOT must be called with a single source key."
	errBitfieldType    = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errOverflowType    = "ERR Invalid OVERFLOW type specified"
	errBitfieldRO      = "ERR BITFIELD_RO only supports the GET subcommand"
	errLCSType         = "ERR The specified keys must contain string values"
	errLCSLenAndIdx    = "ERR If you want both the length and indexes, please just use IDX."
	errLCSTooLong      = "ERR String too long for LCS"
	errLCSMemory       = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	errIndexRangeText  = "ERR index out of range"
	errRankZero        = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errCountNegative   = "ERR COUNT can't be negative"
	errMaxlenNegative  = "ERR MAXLEN can't be negative"
	errTimeoutNotFloat = "ERR timeout is not a float or out of range"
	errTimeoutNegative = "ERR timeout is negative"
	errTimeoutNotInt   = "ERR timeout is not an integer or out of range"
	errIdleTimeNotLRU  = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	// client tracking (tracking.go)
	errTrackingOneRedirect      = "ERR A client can only redirect to a single other client"
	errTrackingNoRedirect       = "ERR The client ID you want redirect to does not exist"
	errTrackingPrefixNeedsBcast = "ERR PREFIX option requires BCAST mode to be enabled"
	errTrackingSwitchBcast      = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	errTrackingOptBcast         = "ERR OPTIN and OPTOUT are not compatible with BCAST"
	errTrackingOptInOut         = "ERR You can't specify both OPTIN mode and OPTOUT mode"
	errTrackingSwitchOpt        = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	errCachingNotTracking       = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	errCachingYes               = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
	errCachingNo                = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
	// SHUTDOWN (cmd_conn.go) and no_multi commands in MULTI
	errNoMulti    = "ERR Command not allowed inside a transaction"
	errNoShutdown = "ERR No shutdown in progress."
	// SLOWLOG GET's count and MONITOR inside MULTI (slowlog.c, replication.c)
	errSlowlogCount  = "ERR count should be greater than or equal to -1"
	errMonitorInExec = "ERR MONITOR isn't allowed for DENY BLOCKING client"
	// CLIENT LIST and KILL (cmd_clientlist.go)
	errInvalidClientID  = "ERR Invalid client ID"
	errNoSuchClient     = "ERR No such client"
	errClientIDPositive = "ERR client-id should be greater than 0"
	// CLIENT UNBLOCK (unblock.go): the caller's refusal, the blocked client's answer
	errUnblockReason = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
	errPauseMode     = "ERR CLIENT PAUSE mode must be WRITE or ALL"
	errUnblocked     = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	// scripting (cmd_script.go)
	errNoScript         = "NOSCRIPT No matching script. Please use EVAL."
	errBusyScript       = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errNotBusy          = "NOTBUSY No scripts in execution right now."
	errUnkillable       = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	errKeysGreater      = "ERR Number of keys can't be greater than number of args"
	errKeysNegative     = "ERR Number of keys can't be negative"
	errScriptFlushArgs  = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
	errWriteFlagRO      = "ERR Can not execute a script with write flag using *_ro command."
	errScriptUnknownCmd = "ERR Unknown Redis command called from script"
	errScriptArity      = "ERR Wrong number of args calling Redis command from script"
	errScriptNoScript   = "ERR This Redis command is not allowed from script"
	errScriptReadOnly   = "ERR Write commands are not allowed from read-only scripts."
	// In cluster mode (script.c scriptVerifyClusterState, eval.c
	// scriptPrepareForRun).
	errScriptNonLocalKey = "ERR Script attempted to access a non local key in a cluster node"
	errScriptCrossSlot   = "ERR Script attempted to access keys that do not hash to the same slot"
	errScriptNoCluster   = "ERR Can not run script on cluster, 'no-cluster' flag is set."
	// FUNCTION FLUSH and LIST (functions.c)
	errFunctionFlushArg    = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
	errFunctionLibraryName = "ERR library name argument was not given"
	// RESTORE (cluster.c restoreCommand, Redis 7.0; BUSYKEY is server.c's
	// shared.busykeyerr)
	errBusyKey     = "BUSYKEY Target key name already exists."
	errDumpPayload = "ERR DUMP payload version or checksum are wrong"
	errBadData     = "ERR Bad data format"
	errRestoreTTL  = "ERR Invalid TTL value, must be >= 0"
	errRestoreIdle = "ERR Invalid IDLETIME value, must be >= 0"
	errRestoreFreq = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	// MIGRATE (cluster.c migrateCommand and migrateGetSocket, Redis 7.0)
	errMigrateKeys    = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	errMigrateConnect = "IOERR error or timeout connecting to the client"
	migrateNoKey      = "NOKEY" // a status reply, not an error
)

// errMigrateIO is MIGRATE's refusal after a socket error or timeout
// talking to the target (migrateCommand's socket_err: "-IOERR error or
// timeout %s to target instance").
func errMigrateIO(writing bool) string {
	if writing {
		return "IOERR error or timeout " + "writing" + " to target instance"
	}
	return "IOERR error or timeout " + "reading" + " to target instance"
}

// errMigrateTarget passes on the first error the target answered, its
// leading '-' dropped ("Target instance replied with error: %s").
func errMigrateTarget(text []byte) string {
	return "ERR Target instance replied with error: " + string(text)
}

// errSubcommandSyntax is addReplySubcommandSyntaxError's text (cmd upper
// case).
func errSubcommandSyntax(cmd string, sub []byte) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + string(sub[:min(len(sub), 128)]) +
		"'. Try " + cmd + " HELP."
}

// errFunctionListArg is FUNCTION LIST's text for an argument it does not
// know.
func errFunctionListArg(arg []byte) string { return "ERR Unknown argument " + string(arg) }

// redis-server's replies of cluster mode and of COMMAND GETKEYS
// (cluster.go, crossslot.go).
const (
	errCrossSlot          = "CROSSSLOT Keys in request don't hash to the same slot"
	errClusterDisabled    = "ERR This instance has cluster support disabled"
	errSelectCluster      = "ERR SELECT is not allowed in cluster mode"
	errMoveCluster        = "ERR MOVE is not allowed in cluster mode"
	errSwapDBCluster      = "ERR SWAPDB is not allowed in cluster mode"
	errInvalidSlot        = "ERR Invalid slot"
	errInvalidSlotOrCount = "ERR Invalid slot or number of keys"
	errGetKeysUnknown     = "ERR Invalid command specified"
	errGetKeysArity       = "ERR Invalid number of arguments specified for command"
	errGetKeysNone        = "ERR The command has no key arguments"
	errGetKeysInvalid     = "ERR Invalid arguments specified for command"
)

func errUnknownNode(id []byte) string { return "ERR Unknown node " + string(id) }

// redis-server's replies of the set and sorted-set commands (t_set.c,
// t_zset.c).
const (
	errNumKeysTooMany  = "ERR Number of keys can't be greater than number of args"
	errNumKeysPositive = "ERR numkeys should be greater than 0"
	errCountPositive   = "ERR count should be greater than 0"
	errLimitNegative   = "ERR LIMIT can't be negative"
	errZAddXXNX        = "ERR XX and NX options at the same time are not compatible"
	errZAddGTLTNX      = "ERR GT, LT, and/or NX options at the same time are not compatible"
	errZAddIncrPair    = "ERR INCR option supports a single increment-element pair"
	errScoreNaN        = "ERR resulting score is not a number (NaN)"
	errMinMaxFloat     = "ERR min or max is not a float"
	errMinMaxLex       = "ERR min or max not valid string range item"
	errWeightFloat     = "ERR weight value is not a float"
	errLimitNeedsBy    = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	errScoresWithLex   = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
)

// SORT's and SORT_RO's texts (Redis 7.0, sort.c sortCommandGeneric).
const (
	errSortScore      = "ERR One or more scores can't be converted into double"
	errSortByCluster  = "ERR BY option of SORT denied in Cluster mode."
	errSortGetCluster = "ERR GET option of SORT denied in Cluster mode."
)

// redis-server's replies of the geo commands (geo.c).
const (
	errGeoUnit           = "ERR unsupported unit provided. please use M, KM, FT, MI"
	errGeoMember         = "ERR could not decode requested zset member"
	errGeoRadiusNegative = "ERR radius cannot be negative"
	errGeoBoxNegative    = "ERR height or width cannot be negative"
	errGeoRadiusNotNum   = "ERR need numeric radius"
	errGeoWidthNotNum    = "ERR need numeric width"
	errGeoHeightNotNum   = "ERR need numeric height"
	errGeoCount          = "ERR COUNT must be > 0"
	errGeoAnyNeedsCount  = "ERR the ANY argument requires COUNT argument"
	geoStoreSearch       = "GEOSEARCHSTORE"
	geoStoreRadius       = "STORE option in GEORADIUS"
)

// errGeoPair is the reply to coordinates outside the indexable limits,
// printed as C's "%f" prints a double.
func errGeoPair(lon, lat float64) string {
	return "ERR invalid longitude,latitude pair " + cFloat(lon) + "," + cFloat(lat)
}

// cFloat is C's "%f" of f (six decimals; inf and -inf).
func cFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// errGeoStoreWith is the reply to STORE (what: geoStoreRadius) or
// GEOSEARCHSTORE (geoStoreSearch) with WITHDIST, WITHHASH or WITHCOORD.
func errGeoStoreWith(what string) string {
	return "ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
}

// errGeoFrom and errGeoBy are GEOSEARCH's replies to a missing centre or
// shape; name is the command as the client spelled it.
func errGeoFrom(name []byte) string {
	return "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(name)
}

func errGeoBy(name []byte) string {
	return "ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(name)
}

// errAtLeastOneKey is the algebra's reply to a numkeys below 1.
func errAtLeastOneKey(cmd string) string {
	return "ERR at least 1 input key is needed for '" + cmd + "' command"
}

// redis-server's replies that name a part of the request.

func errWrongArgs(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// errUnknownClientType is CLIENT LIST's and KILL's reply to a TYPE they
// do not know.
func errUnknownClientType(t []byte) string { return "ERR Unknown client type '" + string(t) + "'" }

// errNoSuchUser is CLIENT KILL's reply to a USER that does not exist.
func errNoSuchUser(u []byte) string { return "ERR No such user '" + string(u) + "'" }

// errUnknownCommand is processCommand's text: each argument quoted, the
// list cut near 128 bytes.
func errUnknownCommand(args [][]byte) string {
	var sb strings.Builder
	for _, a := range args[1:] {
		if sb.Len() >= 128 {
			break
		}
		room := 128 - sb.Len() // redis-server's "'%.*s' " with 128 - sdslen(args)
		sb.WriteByte('\'')
		sb.Write(a[:min(len(a), room)])
		sb.WriteString("' ")
	}
	return "ERR unknown command '" + string(args[0][:min(len(args[0]), 128)]) +
		"', with args beginning with: " + sb.String()
}

func errUnknownSubcommand(cmd string, sub []byte) string {
	return "ERR unknown subcommand '" + string(sub[:min(len(sub), 128)]) + "'. Try " + strings.ToUpper(cmd) + " HELP."
}

// errLatencyNoSamples is LATENCY GRAPH of an event with no series
// (latency.c latencyCommand's nodataerr, through addReplyErrorFormat,
// which makes line breaks spaces).
func errLatencyNoSamples(event []byte) string {
	return "ERR No samples available for event '" + strings.NewReplacer("\r", " ", "\n", " ").Replace(string(event)) + "'"
}

func errExpireTime(cmd string) string { return "ERR invalid expire time in '" + cmd + "' command" }

func errUnsupportedOption(opt []byte) string { return "ERR Unsupported option " + string(opt) }

func errHelloOption(opt []byte) string {
	return "ERR Syntax error in HELLO option '" + string(opt) + "'"
}

func errSetInfoValue(opt []byte) string {
	return "ERR " + string(opt) + " cannot contain spaces, newlines or special characters."
}

func errIntRange(lo, hi int64) string {
	return "ERR value is out of range, value must between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10)
}

// errPrefixOverlap: p overlaps other, a prefix the client has (existing)
// or another in the same command.
func errPrefixOverlap(p, other string, existing bool) string {
	with := "another provided"
	if existing {
		with = "an existing"
	}
	return "ERR Prefix '" + p + "' overlaps with " + with + " prefix '" + other + "'. Prefixes for a single client must not overlap."
}

// errSSubscribeDenyBlocking is SSUBSCRIBE's refusal inside EXEC, where a
// client must get one reply per command (pubsub.c ssubscribeCommand's
// CLIENT_DENY_BLOCKING; SUBSCRIBE and PSUBSCRIBE are let through MULTI).
const errSSubscribeDenyBlocking = "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"

// errExecAbortBecause is EXEC's refusal for err (multi.c
// execCommandAbort, "ERR " left out as Redis leaves it out).
func errExecAbortBecause(err string) string {
	return "EXECABORT Transaction discarded because of: " + strings.TrimPrefix(err, "ERR ")
}

func errSubscribedOnly(name string) string {
	return "ERR Can't execute '" + name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

func errConfigSetUnknown(name []byte) string {
	return "ERR Unknown option or number of arguments for CONFIG SET - '" + string(name) + "'"
}

func errConfigSetFailed(name, why string) string {
	return "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why
}

// redis-server 7.2's replies, where tiercache answers as 7.2 does (HELLO
// and the version it reports are 7.2's): the 7.0 the tests run beside has
// not these texts.
const (
	errHelloNoAuth  = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errTimeoutRange = "ERR timeout is out of range"
)

// redis-server 7.4's replies of the hash field expiry commands (t_hash.c
// hexpireGenericCommand, httlGenericCommand, hpersistCommand) and Redis
// 8's of HGETDEL, HGETEX and HSETEX (hgetdelCommand, hgetexCommand,
// hsetexParseArgs): the 7.0 beside the tests has not these commands. The
// HEXPIRE family's were checked against a redis-server built from Redis's
// source (TestHashFieldExpiryMatchesRedis74's transcript).
const (
	errExpireNegative    = "ERR invalid expire time, must be >= 0"
	errFieldsMissing     = "ERR Mandatory argument FIELDS is missing or not at the right position"
	errNumFieldsGreater  = "ERR Parameter `numFields` should be greater than 0"
	errNumFieldsPositive = "ERR Number of fields must be a positive integer"
	errNumFieldsMismatch = "ERR The `numfields` parameter must match the number of arguments"
	errInvalidNumFields  = "ERR invalid number of fields"
	errMissingExpire     = "ERR missing expire time"
	errSetexOneCond      = "ERR Only one of FXX or FNX arguments can be specified"
	errSetexOneExpiry    = "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
)

func errUnknownArgument(arg []byte) string { return "ERR unknown argument: " + string(arg) }

// errUnrecognizedOption is CLIENT SETINFO's (7.2) reply to an option it
// does not know.
func errUnrecognizedOption(opt []byte) string { return "ERR Unrecognized option '" + string(opt) + "'" }

// errUnknownType is SCAN's reply to a TYPE name 7.2 does not know (7.0
// matches nothing).
func errUnknownType(name string) string { return "ERR unknown type name '" + name + "'" }

// tiercache's own replies, for what redis-server does not have or does
// otherwise.
const (
	errCorruptHash    = "ERR server: a stored hash does not decode"
	errCorruptList    = "ERR corrupt list value"
	errCorruptSet     = "ERR server: a stored set or sorted set does not decode"
	errInternal       = "ERR internal error; connection closed"
	errEmptyGetBatch  = "ERR internal error: the cache answered no key of a GET batch"
	errConfigRewrite  = "ERR CONFIG REWRITE is not supported by tiercache: it does not write its configuration file; edit the file and restart"
	configImmutable   = "tiercache cannot change it at runtime; set it in the configuration file and restart" // why CONFIG SET failed
	configNormalLimit = "the normal class's limit is server.max_output_buffer, set in the configuration file (a hard limit; no soft one)"
	errNoFunctions    = "ERR tiercache does not implement Redis functions (FUNCTION, FCALL, FCALL_RO): load the code as a script with SCRIPT LOAD and call it with EVALSHA"
	errNoShutdownHook = "ERR SHUTDOWN is not available in this process: it has no way to stop (server.Options.Shutdown is unset)"
	errDumpFieldTTL   = "ERR DUMP of a hash with field expiries is not supported: Redis 7.0's payload (RDB version 10) cannot hold them; PERSIST the fields (HPERSIST) or copy the hash otherwise"
)

// errRestoreTooBig refuses a RESTORE payload whose value is past the
// limits as it is read (value.DumpLimitError), before it is built.
func errRestoreTooBig(le *value.DumpLimitError) string {
	if le.Items {
		return "ERR RESTORE payload's value has " + strconv.Itoa(le.N) + " elements, past the limit of " + strconv.Itoa(le.Limit) + " (server.max_list_elements, max_set_members, max_hash_fields)"
	}
	return "ERR RESTORE payload's value takes over " + strconv.Itoa(le.N) + " bytes, the limit (max_value) is " + strconv.Itoa(le.Limit)
}

// errClusterFixed answers the CLUSTER subcommands that change a
// cluster's topology or configuration (MEET, ADDSLOTS, FAILOVER...).
func errClusterFixed(sub []byte) string {
	return "ERR CLUSTER " + strings.ToUpper(string(sub)) + " is not supported: tiercache's emulated cluster (server.cluster) is one node that owns every slot"
}

// errStringTooLong is Redis's "string exceeds maximum allowed size", with
// tiercache's limit named.
// errSortTooBig refuses a SORT whose result (the reply, or the list to
// store) grows past max_value bytes, before it is all built.
func errSortTooBig(max int) string {
	return "ERR SORT's result exceeds the limit (max_value) of " + strconv.Itoa(max) + " bytes"
}

// errEmptyKey answers a command on the key "": Redis takes it, the tier
// refuses a zero-length key (tier.ErrEmptyKey); a difference from Redis.
const errEmptyKey = "ERR empty keys are not supported by tiercache (a key needs at least one byte)"

// errNoACLCategories answers COMMAND LIST FILTERBY ACLCAT: tiercache has
// no ACL, and its commands no categories.
const errNoACLCategories = "ERR tiercache keeps no ACL categories: COMMAND LIST FILTERBY takes MODULE or PATTERN"

func errStringTooLong(max int) string {
	return "ERR string exceeds maximum allowed size (max_value, " + strconv.Itoa(max) + " bytes)"
}

// The HyperLogLog commands' texts (Redis 7.0, hyperloglog.c:
// isHLLObjectOrReply, invalid_hll_err, pfdebugCommand; tiercache answers
// any failure of PFSELFTEST's check with the last, one of Redis's).
const (
	errNotHLL       = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errCorruptHLL   = "INVALIDOBJ Corrupted HLL object detected"
	errPFDebugNoKey = "ERR The specified key does not exist"
	errHLLNotSparse = "ERR HLL encoding is not sparse"
	errHLLSelfTest  = "TESTFAILED dense/sparse disagree"
)

// errPFDebugUnknown refuses PFDEBUG's subcommand sub, as given.
func errPFDebugUnknown(sub string) string { return "ERR Unknown PFDEBUG subcommand '" + sub + "'" }

// errRandCountTooLarge refuses a negative count past max: what are the
// items picked ("fields" for HRANDFIELD, "members" for SRANDMEMBER and
// ZRANDMEMBER).
func errRandCountTooLarge(max int, what string) string {
	return "ERR count is too large: at most " + strconv.Itoa(max) + " " + what + " with repetitions"
}

// replyError is an error a command's Update function returns to be
// answered as it is (cacheError): a RESP error line.
type replyError string

func (e replyError) Error() string { return string(e) }

// The replies Update functions return.
const (
	wrongType     = replyError(errWrongType)
	errNoSuchKey  = replyError(errNoSuchKeyText)
	errIndexRange = replyError(errIndexRangeText)
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
	case errors.Is(err, tier.ErrNoSuchKey):
		return errNoSuchKeyText
	case errors.Is(err, tier.ErrEmptyKey):
		return errEmptyKey
	case errors.Is(err, hash.ErrCorrupt):
		return errCorruptHash
	case errors.Is(err, list.ErrCorrupt):
		return errCorruptList
	case errors.Is(err, set.ErrCorrupt), errors.Is(err, zset.ErrCorrupt):
		return errCorruptSet
	case errors.Is(err, hll.ErrNotHLL):
		return errNotHLL
	case errors.Is(err, hll.ErrCorrupt):
		return errCorruptHLL
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
	if le, ok := errors.AsType[*set.LimitError](err); ok {
		if le.Members {
			return "ERR set would have " + strconv.Itoa(le.N) + " members, the limit (server.max_set_members) is " + strconv.Itoa(le.Limit)
		}
		return "ERR set would take " + strconv.Itoa(le.N) + " bytes, the limit (max_value) is " + strconv.Itoa(le.Limit)
	}
	if le, ok := errors.AsType[*list.LimitError](err); ok {
		if le.Elements {
			return "ERR list would have " + strconv.Itoa(le.N) + " elements, the limit (server.max_list_elements) is " + strconv.Itoa(le.Limit)
		}
		return "ERR list would take " + strconv.Itoa(le.N) + " bytes, the limit (max_value) is " + strconv.Itoa(le.Limit)
	}
	return "ERR " + err.Error() // a protocol error's own text, or the cache's
}
