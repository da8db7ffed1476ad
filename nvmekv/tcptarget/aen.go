package tcptarget

import (
	"encoding/binary"
	"slices"
)

// aenNSChanged is the completion DW0 of an Asynchronous Event Request
// reporting Namespace Attribute Changed: event type 2 (notice) in bits
// 2:0, information 00h in 15:8, log page 04h (Changed Namespace List) in
// 23:16 (NVMe Base Specification 2.0, Asynchronous Event Request command
// completion; the Linux host rescans its namespaces on it:
// drivers/nvme/host/core.c nvme_handle_aen_notice).
const aenNSChanged = 0x00040002

// changedListMax is how many NSIDs the Changed Namespace List holds; more
// changes are reported as FFFFFFFFh in its first entry ("more than 1024
// namespaces changed").
const changedListMax = 1024

// events is a controller's asynchronous event state (under controller.mu).
type events struct {
	held     []*command // Asynchronous Event Requests waiting for an event
	changed  []uint32   // NSIDs changed since the log was last read
	overflow bool       // more than changedListMax changed
	pending  bool       // a change no AER has reported yet
	masked   bool       // reported; the next waits until the host reads the log
}

// nsChanged reports namespaces nsids changed for the controllers of the
// hosts given (every controller when hosts is nil).
func (t *Target) nsChanged(hosts []string, nsids ...uint32) {
	t.mu.Lock()
	var cs []*controller
	for _, c := range t.ctrls {
		if hosts == nil || slices.Contains(hosts, c.hostNQN) {
			cs = append(cs, c)
		}
	}
	t.mu.Unlock()
	for _, c := range cs {
		c.nsChanged(nsids)
	}
}

// nsChanged records the change in the Changed Namespace List and, when the
// host enabled Namespace Attribute Notices (Asynchronous Event
// Configuration bit 8) and no report waits for the log to be read,
// completes a held AER, or the next one to come.
func (c *controller) nsChanged(nsids []uint32) {
	c.mu.Lock()
	ev := &c.ev
	for _, id := range nsids {
		switch {
		case slices.Contains(ev.changed, id):
		case len(ev.changed) == changedListMax:
			ev.overflow = true
		default:
			ev.changed = append(ev.changed, id)
		}
	}
	if c.aec&oaesNSAttribute == 0 || ev.masked {
		c.mu.Unlock()
		return
	}
	var aer *command
	if len(ev.held) > 0 {
		aer, ev.held = ev.held[0], ev.held[1:]
		ev.masked = true
	} else {
		ev.pending = true
	}
	c.mu.Unlock()
	if aer != nil {
		c.admin.respond(aer, scSuccess, aenNSChanged, nil)
	}
}

// asyncEventRequest holds an AER, or completes it at once when a change
// waits to be reported; more than aerLimit outstanding are refused.
func (c *conn) asyncEventRequest(cmd *command) {
	ct := c.ctrl
	ct.mu.Lock()
	ev := &ct.ev
	switch {
	case ev.pending && !ev.masked:
		ev.pending, ev.masked = false, true
		ct.mu.Unlock()
		c.respond(cmd, scSuccess, aenNSChanged, nil)
	case len(ev.held) >= aerLimit:
		ct.mu.Unlock()
		c.respond(cmd, scAERLimit|scDNR, 0, nil)
	default:
		ev.held = append(ev.held, cmd) // it keeps its in-flight slot
		ct.mu.Unlock()
	}
}

// changedNSLog is the Changed Namespace List log page (1024 NSIDs, 4096
// bytes); reading it clears it and, unless RAE (Retain Asynchronous
// Event, CDW10 bit 15) is set, lets the next change be reported.
func (c *controller) changedNSLog(rae bool) []byte {
	b := make([]byte, 4*changedListMax)
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := &c.ev
	if ev.overflow {
		binary.LittleEndian.PutUint32(b, nsidAll)
	} else {
		for i, id := range ev.changed {
			binary.LittleEndian.PutUint32(b[4*i:], id)
		}
	}
	ev.changed, ev.overflow = nil, false
	if !rae {
		ev.masked = false
	}
	return b
}
