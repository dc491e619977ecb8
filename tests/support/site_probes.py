"""A site's own probe marked `danger` (it changes state on its target), for the tests of the
console's typed confirmation and of the poller that never runs one."""

DANGER_PROBE = '''
[[probe]]
name = "nic.danger_test"
description = "a probe that changes state (for the test: ethtool -S)"
target = "nic"
transport = "ssh"
parser = "ethtool-stats"
danger = true
command.argv = ["ethtool", "-S", "{netdev}"]
params.netdev = { from = "nic.netdev", required = true, pattern = "[A-Za-z0-9_.:-]+" }
'''
