package tier

import "github.com/tiercache/tiercache/numa"

func warmArenaForTests() numa.ArenaOptions {
	return numa.ArenaOptions{Node: numa.Unbound}
}
