"""fabtui's test suite: a package, so that its modules have one name each (`tests.test_cli`,
`tests.support.tui_support`) for pytest, mypy and the benchmarks alike."""
