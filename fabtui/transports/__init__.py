"""Transports: how a command reaches a target and its output comes back.

- `local`: a subprocess on this machine (asyncio; timeout, output cap, cancellation, streaming);
- `ssh`: the system `ssh` client, so users' ~/.ssh/config, keys, agent, ProxyJump and
  ControlMaster work as they do by hand;
- `cli_session`: an interactive switch CLI (pexpect): prompts, paging, error replies, reconnect;
- `nvml`: GPU state through pynvml, with a clear result where there is no NVIDIA driver.

Every call returns a `fabtui.model.transport.TransportResult`; failures are values
(`error`, `error_message`), never exceptions, except for programming errors.
"""
