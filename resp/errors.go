package resp

// ProtocolError is a violation of RESP in the request stream: the stream
// is unusable after it. Msg is redis-server's text for the same violation
// (networking.c: processMultibulkBuffer, processInlineBuffer); a server
// answers "ERR Protocol error: <Msg>" and closes the connection, as
// redis-server does (R2).
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

func protoErr(msg string) error { return &ProtocolError{Msg: msg} }
