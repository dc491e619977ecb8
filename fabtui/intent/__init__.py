"""The fabric's intended configuration and how the running fleet departs from it (issue 41).

Data in the repository (`configs/`: scenarios, Jinja2 templates, the selection database) read by
a headless core: `scenario` loads a scenario and the fleet intent it names, `render` renders its
templates for every device of a topology, `drift` compares running configuration with that
intent (each difference with its fix), `baseline` records and compares known-good states, and
`selection` checks what every device runs against the validated combinations. Nothing here runs
a command: the workspace (`fabtui.workspace.intent`) reads the devices and hands the readings in.
"""
