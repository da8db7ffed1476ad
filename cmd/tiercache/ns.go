package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tiercache/tiercache/nvmekv/dhchap"
	"github.com/tiercache/tiercache/nvmekv/nsadmin"
	"github.com/tiercache/tiercache/nvmekv/nvmetcp"
)

// defaultNSRegistry is where `tiercache ns` records the namespaces this
// host created (nsadmin.Manager's registry).
const defaultNSRegistry = "/var/lib/tiercache/namespaces.json"

const nsUsage = `usage: tiercache ns list   -ctrl /dev/nvmeX            the controller, its capacity and every namespace, with owner
       tiercache ns create -ctrl /dev/nvmeX -name NAME -size SIZE
                                    create (or find again) the KV namespace NAME, attach it, print its /dev/ngXnY
       tiercache ns delete -ctrl /dev/nvmeX -name NAME | -nsid N
                                    detach and delete a namespace this host created (never another)
       tiercache ns claim  -ctrl /dev/nvmeX -name NAME -nsid N
                                    record an existing KV namespace as NAME (never deleted)
       tiercache ns forget -ctrl /dev/nvmeX -name NAME
                                    detach NAME and drop its record, deleting nothing
Instead of -ctrl: -connect HOST:PORT -nqn SUBNQN [-hostnqn NQN] [-secret FILE] speaks NVMe/TCP itself.
Flags: -registry PATH (default ` + defaultNSRegistry + ` or $TIERCACHE_NS_REGISTRY), -json, -timeout 30s.
`

// nsFlags are the flags of `tiercache ns`.
type nsFlags struct {
	ctrl, connect, nqn, hostNQN, secret, registry, name string
	size                                                ByteSize
	nsid                                                uint
	json                                                bool
	timeout                                             time.Duration
}

func cmdNS(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(stderr, nsUsage)
		return 2
	}
	verb, args := args[0], args[1:]
	f := &nsFlags{}
	fs := flag.NewFlagSet("tiercache ns "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, nsUsage) }
	fs.StringVar(&f.ctrl, "ctrl", "", "the controller's char device, /dev/nvmeX (a KV SSD attached by the kernel)")
	fs.StringVar(&f.connect, "connect", "", "HOST:PORT of an NVMe/TCP subsystem to manage over a connection of this process")
	fs.StringVar(&f.nqn, "nqn", "", "with -connect: the subsystem NQN")
	fs.StringVar(&f.hostNQN, "hostnqn", "nqn.2014-08.org.nvmexpress:uuid:tiercache-ns", "with -connect: the host NQN")
	fs.StringVar(&f.secret, "secret", "", "with -connect: a file holding the host's DHHC-1 secret")
	fs.StringVar(&f.registry, "registry", envOr("TIERCACHE_NS_REGISTRY", defaultNSRegistry), "the file recording the namespaces this host created")
	fs.StringVar(&f.name, "name", "", "the namespace's name (a tenant's)")
	fs.Var(&f.size, "size", "create: the namespace's size, e.g. 64MiB")
	fs.UintVar(&f.nsid, "nsid", 0, "delete, claim: the namespace identifier")
	fs.BoolVar(&f.json, "json", false, "print JSON")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long the command may take, the wait for /dev/ngXnY included")
	if err := fs.Parse(args); err != nil {
		return exitCode(err, stderr)
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments: %q", fs.Args()))
	}
	if (f.ctrl == "") == (f.connect == "") {
		errs = append(errs, errors.New("-ctrl /dev/nvmeX or -connect HOST:PORT is required (one of them)"))
	}
	if f.connect != "" && f.nqn == "" {
		errs = append(errs, errors.New("-connect needs -nqn, the subsystem NQN"))
	}
	switch verb {
	case "list":
	case "create":
		if f.name == "" || f.size == 0 {
			errs = append(errs, errors.New("create needs -name and -size"))
		}
	case "delete":
		if (f.name == "") == (f.nsid == 0) {
			errs = append(errs, errors.New("delete needs -name or -nsid (one of them)"))
		}
	case "claim":
		if f.name == "" || f.nsid == 0 {
			errs = append(errs, errors.New("claim needs -name and -nsid"))
		}
	case "forget":
		if f.name == "" {
			errs = append(errs, errors.New("forget needs -name"))
		}
	default:
		fmt.Fprintf(stderr, "tiercache ns: unknown command %q\n%s", verb, nsUsage)
		return 2
	}
	if err := errors.Join(errs...); err != nil {
		return exitCode(err, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	c, closeFn, err := f.open(ctx)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer closeFn()
	m := &nsadmin.Manager{C: c, RegistryPath: f.registry, DeviceWait: f.timeout}
	switch verb {
	case "list":
		list, err := m.List(ctx)
		if err != nil {
			return exitCode(err, stderr)
		}
		return f.print(stdout, c.Info(), list)
	case "create":
		o, err := m.Ensure(ctx, f.name, uint64(f.size))
		if err != nil {
			return exitCode(err, stderr)
		}
		return f.print(stdout, c.Info(), []nsadmin.Owned{o})
	case "claim":
		o, err := m.Claim(ctx, f.name, uint32(f.nsid))
		if err != nil {
			return exitCode(err, stderr)
		}
		return f.print(stdout, c.Info(), []nsadmin.Owned{o})
	case "delete":
		if f.nsid != 0 {
			err = m.DeleteNSID(ctx, uint32(f.nsid))
		} else {
			err = m.Drop(ctx, f.name)
		}
	case "forget":
		err = m.Forget(ctx, f.name)
	}
	if err != nil {
		return exitCode(err, stderr)
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// open reaches the controller: its char device, or an NVMe/TCP connection.
func (f *nsFlags) open(ctx context.Context) (*nsadmin.Controller, func() error, error) {
	if f.ctrl != "" {
		c, err := nsadmin.Open(ctx, f.ctrl)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	o := nvmetcp.HostOptions{SubNQN: f.nqn, HostNQN: f.hostNQN, Timeout: f.timeout}
	if f.secret != "" {
		b, err := os.ReadFile(f.secret)
		if err != nil {
			return nil, nil, fmt.Errorf("-secret: %w", err)
		}
		s, err := dhchap.ParseSecret(string(b))
		if err != nil {
			return nil, nil, fmt.Errorf("-secret %s: %w", f.secret, err)
		}
		o.Secret = &s
	}
	h, err := nvmetcp.Connect(f.connect, o)
	if err != nil {
		return nil, nil, err
	}
	c, err := nsadmin.New(ctx, h, "")
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	return c, h.Close, nil
}

// print writes the controller and namespaces as a table, or as JSON.
func (f *nsFlags) print(w io.Writer, info nsadmin.Info, list []nsadmin.Owned) int {
	if f.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Controller nsadmin.Info    `json:"controller"`
			Namespaces []nsadmin.Owned `json:"namespaces"`
		}{info, list}); err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintf(w, "%s (cntlid %d, model %q): namespace management %v, capacity %d, unallocated %d, NN %d\n",
		info.SubNQN, info.CNTLID, info.Model, info.NSManagement, info.Capacity, info.Unallocated, info.MaxNSID)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NSID\tCSI\tSIZE\tATTACHED\tID\tNAME\tOWNER\tDEVICE")
	for _, o := range list {
		n, r := o.Namespace, o.Record
		csi, owner := "other", "-"
		if n.KV {
			csi = "kv"
		}
		switch {
		case r.Name != "" && r.Created:
			owner = "created here"
		case r.Name != "":
			owner = "claimed"
		}
		id := n.ID()
		if n.NSID == 0 {
			id, csi = r.ID, "gone"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%v\t%s\t%s\t%s\t%s\n", n.NSID, csi, n.Size, n.Attached, orDash(id), orDash(r.Name), owner, orDash(o.Device))
	}
	tw.Flush()
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
