"""The cage of managed bots: start, isolate (bubblewrap, seccomp, own network), limit (cgroups), restart and stop them."""
