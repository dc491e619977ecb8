"""The design in NetBox, through pynetbox: export a topology into a NetBox site, import a site
back as a topology (the mapping: `fabtui.topology.netbox`). `Workspace.netbox_export` and
`netbox_import` are the doors.

Side effects: export creates objects in the NetBox at `url` (the custom fields the design needs,
a site, its racks, device types, roles, platforms, devices, GPU inventory items, interfaces, IP
addresses and cables, in bulk); it refuses a site that already holds devices, so nothing is
overwritten. Import only reads. The token is a reference (`env:VAR`, `file:PATH`, ...), never
the secret itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fabtui.errors import RequestError
from fabtui.model.topology import Topology
from fabtui.topology.netbox import (
    API_VERSION,
    CUSTOM_FIELDS,
    UNSPECIFIED,
    NetboxError,
    NetboxRecords,
    export_plan,
    slugify,
    topology_from_netbox,
)

CHUNK = 500
"""Objects per bulk create: one POST each."""


@dataclass(frozen=True)
class ExportResult:
    """What an export created."""

    site: str
    counts: dict[str, int]


def connect(url: str, token_ref: str | None) -> Any:
    """A pynetbox API on `url` that answers as NetBox 4.x. Raises `RequestError` when the
    token reference does not resolve or the server is no NetBox 4."""
    import pynetbox  # type: ignore[import-untyped]
    import requests

    from fabtui.transports.credentials import CredentialError, resolve

    try:
        token = resolve(token_ref) if token_ref else None
    except CredentialError as exc:
        raise RequestError(f"--token {token_ref}: {exc}") from None
    api = pynetbox.api(url.rstrip("/"), token=token)
    try:
        version = str(api.version)
    except (requests.RequestException, pynetbox.RequestError) as exc:
        raise RequestError(f"{url}: not reachable as a NetBox API: {exc}") from None
    if not version.startswith("4."):
        raise RequestError(f"{url}: NetBox API version {version or 'unknown'}; fabtui speaks "
                           f"NetBox 4 (written against {API_VERSION})")
    return api


def _chunks(items: Sequence[dict[str, Any]]) -> Iterator[Sequence[dict[str, Any]]]:
    for start in range(0, len(items), CHUNK):
        yield items[start:start + CHUNK]


def _create(endpoint: Any, items: Sequence[dict[str, Any]]) -> list[Any]:
    """Bulk-create `items`, returning the created records in order."""
    created: list[Any] = []
    for chunk in _chunks(items):
        answer = endpoint.create(list(chunk))
        created += answer if isinstance(answer, list) else [answer]
    return created


def _get_or_create(endpoint: Any, key: dict[str, Any], fields: dict[str, Any]) -> int:
    found = endpoint.get(**key)
    if found is None:
        found = endpoint.create({**key, **fields})
    return int(found.id)


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def export_design(api: Any, topology: Topology,
                  progress: Callable[[str], None] | None = None) -> ExportResult:
    """Create `topology` in NetBox (see the module docstring). Raises `RequestError` for a
    site that already holds devices or an answer NetBox refused; `NetboxError` for a design
    NetBox cannot hold."""
    import pynetbox

    plan = export_plan(topology)
    say = progress or (lambda _text: None)
    try:
        return _export(api, plan, say)
    except pynetbox.RequestError as exc:
        raise RequestError(f"NetBox refused: {exc.error}") from None


def _export(api: Any, plan: Any, say: Callable[[str], None]) -> ExportResult:
    dcim = api.dcim
    existing = {cf.name for cf in api.extras.custom_fields.all()}
    missing = [{"name": name, "type": kind, "object_types": list(types),
                "description": f"fabtui: {text}", "required": False}
               for name, kind, types, text in CUSTOM_FIELDS if name not in existing]
    if missing:
        _create(api.extras.custom_fields, missing)
    slug = plan.site["slug"]
    site = dcim.sites.get(slug=slug)
    if site is not None and dcim.devices.count(site_id=site.id):
        raise RequestError(f"NetBox site {slug} already holds devices: export into a new "
                           "site (nothing was changed)")
    site_id = int(site.id) if site is not None else int(dcim.sites.create(
        {**plan.site, "status": "active"}).id)
    say(f"site {slug}")
    racks = {r.name: int(r.id) for r in _create(
        dcim.racks, [{"name": name, "site": site_id, "status": "active"}
                     for name in plan.racks])} if plan.racks else {}
    maker = _get_or_create(dcim.manufacturers, {"slug": UNSPECIFIED},
                           {"name": "Unspecified"})
    models = {m: _get_or_create(dcim.device_types, {"model": m},
                                {"manufacturer": maker, "slug": slugify(m)})
              for m in plan.models}
    roles = {r: _get_or_create(dcim.device_roles, {"slug": r},
                               {"name": r, "color": "9e9e9e"}) for r in plan.roles}
    platforms = {p: _get_or_create(dcim.platforms, {"slug": p}, {"name": p})
                 for p in plan.platforms}
    devices = {d.name: int(d.id) for d in _create(dcim.devices, [_clean({
        "name": d["name"], "role": roles[d["role"]], "device_type": models[d["model"]],
        "site": site_id, "rack": racks.get(d["rack"]) if d["rack"] else None,
        "platform": platforms.get(d["platform"]) if d["platform"] else None,
        "status": "active", "custom_fields": d["custom_fields"]}) for d in plan.devices])}
    say(f"{len(devices)} devices")
    _create(dcim.inventory_items, [{"device": devices[host], **fields}
                                   for host, fields in plan.gpus])
    made = _create(dcim.interfaces, [_clean({"device": devices[p.device], "name": p.name,
                                             **p.fields}) for p in plan.ports])
    interfaces = {(p.device, p.name): int(r.id) for p, r in zip(plan.ports, made, strict=True)}
    say(f"{len(interfaces)} interfaces")
    addresses = [{"address": _with_mask(p.ip), "status": "active",
                  "assigned_object_type": "dcim.interface",
                  "assigned_object_id": interfaces[(p.device, p.name)]}
                 for p in plan.ports if p.ip]
    _create(api.ipam.ip_addresses, addresses)
    cables = _create(dcim.cables, [_clean({
        "a_terminations": [{"object_type": "dcim.interface", "object_id": interfaces[c.a]}],
        "b_terminations": [{"object_type": "dcim.interface", "object_id": interfaces[c.b]}],
        "status": "connected", **c.fields}) for c in plan.cables])
    say(f"{len(cables)} cables")
    return ExportResult(site=slug, counts={
        "devices": len(devices), "inventory_items": len(plan.gpus),
        "interfaces": len(interfaces), "ip_addresses": len(addresses), "cables": len(cables),
        "racks": len(racks)})


def _with_mask(ip: str) -> str:
    return f"{ip}/128" if ":" in ip else f"{ip}/32"


def _records(rows: Iterable[Any]) -> list[dict[str, Any]]:
    return [dict(row) for row in rows]


def import_design(api: Any, site_slug: str) -> tuple[Topology, NetboxRecords]:
    """The design NetBox site `site_slug` holds, and the records it was read from. Raises
    `RequestError` for a missing site or a refused query, `NetboxError` for objects that are
    no fabtui design."""
    import pynetbox

    try:
        site = api.dcim.sites.get(slug=site_slug)
        if site is None:
            raise RequestError(f"NetBox has no site {site_slug!r}")
        devices = _records(api.dcim.devices.filter(site_id=site.id))
        ids = [d["id"] for d in devices]
        addresses: list[dict[str, Any]] = []
        for start in range(0, len(ids), 100):
            addresses += _records(api.ipam.ip_addresses.filter(device_id=ids[start:start + 100]))
        records = NetboxRecords(
            site=dict(site), devices=devices,
            interfaces=_records(api.dcim.interfaces.filter(site_id=site.id)),
            inventory_items=_records(api.dcim.inventory_items.filter(site_id=site.id)),
            ip_addresses=addresses,
            cables=_records(api.dcim.cables.filter(site_id=site.id)))
    except pynetbox.RequestError as exc:
        raise RequestError(f"NetBox refused: {exc.error}") from None
    return topology_from_netbox(records), records


__all__ = ["ExportResult", "NetboxError", "connect", "export_design", "import_design"]
