"""A small NetBox 4.x REST API on loopback, for pynetbox to speak real HTTP to in the tests.

A real NetBox 4.6 needs Python 3.12 or newer (its installation docs), newer than these
machines, so this serves the part of the API fabtui uses, in NetBox 4.6's shapes: the objects
are rendered with the fields of netbox-community/netbox v4.6.8's serializers
(`netbox/dcim/api/serializers_/` devices.py, device_components.py, cables.py, sites.py,
racks.py; `netbox/ipam/api/serializers_/ip.py`), nested objects with their `brief_fields`, lists
paginated as `netbox/netbox/api/pagination.py` does (`limit`/`offset`, `limit=0` up to
MAX_PAGE_SIZE 1,000, absolute `next` links), `API-Version` on every answer.

Two modes: `NetboxServer()` starts empty and stores what is POSTed (single objects or lists,
as bulk creates are), rendering it on GET; `NetboxServer(recorded=FOLDER)` serves the recorded
list answers in FOLDER (`<app>__<endpoint>.json`, one NetBox list response each) read-only.
`dump()` gives the stored objects as NetBox JSON (what GET returns), for the round trip.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

API_VERSION = "4.6"
MAX_PAGE_SIZE = 1000
STAMP = "2026-12-05T12:00:00.000000Z"
ENDPOINTS = ("extras/custom-fields", "dcim/sites", "dcim/racks", "dcim/manufacturers",
             "dcim/device-types", "dcim/device-roles", "dcim/platforms", "dcim/devices",
             "dcim/inventory-items", "dcim/interfaces", "ipam/ip-addresses", "dcim/cables")
_MODEL = {"dcim/sites": "dcim.site", "dcim/devices": "dcim.device",
          "dcim/interfaces": "dcim.interface", "dcim/inventory-items": "dcim.inventoryitem",
          "dcim/cables": "dcim.cable"}


class NetboxServer:
    """The API on a free loopback port; `stop()` ends it."""

    def __init__(self, recorded: Path | None = None, token: str = "0123456789abcdef",
                 api_version: str = API_VERSION) -> None:
        self.api_version = api_version
        self.token = token
        self.store: dict[str, dict[int, dict[str, Any]]] = {e: {} for e in ENDPOINTS}
        self.recorded = recorded
        self.next_id = 1
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self._indexes: dict[str, Any] | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                return

            def do_GET(self) -> None:
                server.answer(self, "GET")

            def do_POST(self) -> None:
                server.answer(self, "POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # HTTP -------------------------------------------------------------------------------------
    def answer(self, handler: BaseHTTPRequestHandler, verb: str) -> None:
        parsed = urllib.parse.urlsplit(handler.path)
        path = parsed.path.strip("/")
        query = urllib.parse.parse_qs(parsed.query)
        self.requests.append((verb, handler.path))
        auth = handler.headers.get("Authorization", "")
        if path not in ("api", "api/status") and auth not in (f"Token {self.token}",
                                                              f"Bearer {self.token}"):
            return self._send(handler, 403, {"detail": "Invalid v1 token"})
        if path == "api":
            return self._send(handler, 200, {e.split("/")[0]: f"{self.url}/api/"
                                             f"{e.split('/')[0]}/" for e in ENDPOINTS})
        if path == "api/status":
            return self._send(handler, 200, {"netbox-version": "4.6.8",
                                             "python-version": "3.12.3", "plugins": {}})
        endpoint = path.removeprefix("api/")
        if endpoint not in self.store:
            return self._send(handler, 404, {"detail": "Not found."})
        if verb == "POST":
            if self.recorded is not None:
                return self._send(handler, 405, {"detail": "read-only recording"})
            length = int(handler.headers.get("Content-Length") or 0)
            body = json.loads(handler.rfile.read(length) or b"null")
            with self.lock:
                try:
                    stored = [self.create(endpoint, item) for item in body] \
                        if isinstance(body, list) else [self.create(endpoint, body)]
                    made: Any = [self.render(endpoint, o) for o in stored]
                    made = made if isinstance(body, list) else made[0]
                except ValueError as exc:
                    return self._send(handler, 400, {"detail": str(exc)})
            return self._send(handler, 201, made)
        return self._send(handler, 200, self.page(endpoint, query))

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("API-Version", self.api_version)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    # lists --------------------------------------------------------------------------------------
    def rows(self, endpoint: str) -> list[dict[str, Any]]:
        """Every object of `endpoint` as GET renders it (recorded mode: as recorded)."""
        if self.recorded is not None:
            file = self.recorded / f"{endpoint.replace('/', '__')}.json"
            return json.loads(file.read_text())["results"] if file.exists() else []
        return [self.render(endpoint, obj) for obj in self.store[endpoint].values()]

    def page(self, endpoint: str, query: dict[str, list[str]]) -> dict[str, Any]:
        if self.recorded is not None:
            rows = [r for r in self.rows(endpoint) if self._matches(endpoint, r, query)]
        else:
            objs = [o for o in self.store[endpoint].values()
                    if self._raw_matches(endpoint, o, query)]
            rows = objs  # rendered below, one page at a time
        limit = int((query.get("limit") or ["50"])[0])
        limit = MAX_PAGE_SIZE if limit == 0 else min(limit, MAX_PAGE_SIZE)
        offset = int((query.get("offset") or ["0"])[0])
        chunk = rows[offset:offset + limit]
        if self.recorded is None:
            chunk = [self.render(endpoint, o) for o in chunk]
        following = None
        if offset + limit < len(rows):
            params = {k: v for k, v in query.items() if k not in ("limit", "offset")}
            params.update(limit=[str(limit)], offset=[str(offset + limit)])
            following = f"{self.url}/api/{endpoint}/?" + urllib.parse.urlencode(params,
                                                                                 doseq=True)
        previous = f"{self.url}/api/{endpoint}/?limit={limit}" if offset else None
        return {"count": len(rows), "next": following, "previous": previous,
                "results": chunk}

    def _raw_site(self, endpoint: str, obj: dict[str, Any]) -> Any:
        if endpoint == "dcim/sites":
            return obj["id"]
        if "site" in obj:
            return obj["site"]
        if "device" in obj:
            return self.store["dcim/devices"][obj["device"]]["site"]
        if endpoint == "dcim/cables":
            iface = self.store["dcim/interfaces"][obj["a_terminations"][0]["object_id"]]
            return self.store["dcim/devices"][iface["device"]]["site"]
        return None

    def _raw_matches(self, endpoint: str, obj: dict[str, Any],
                     query: dict[str, list[str]]) -> bool:
        for key, wanted in query.items():
            if key in ("limit", "offset", "brief", "ordering"):
                continue
            if key == "site_id":
                value: Any = self._raw_site(endpoint, obj)
            elif key == "device_id":
                value = obj.get("device")
                if endpoint == "ipam/ip-addresses":
                    assigned = int(obj.get("assigned_object_id") or 0)
                    iface = self.store["dcim/interfaces"].get(assigned)
                    value = iface["device"] if iface else None
            else:
                value = obj.get(key)
            if str(value) not in wanted:
                return False
        return True

    def _index(self) -> dict[str, Any]:
        """Cables by interface and components by device, rebuilt after each create."""
        if self._indexes is None:
            cables: dict[int, dict[str, Any]] = {}
            for cable in self.store["dcim/cables"].values():
                for side in ("a_terminations", "b_terminations"):
                    for term in cable[side]:
                        cables[term["object_id"]] = cable
            counts: dict[tuple[str, int], int] = {}
            for endpoint in ("dcim/interfaces", "dcim/inventory-items"):
                for obj in self.store[endpoint].values():
                    counts[(endpoint, obj["device"])] = counts.get(
                        (endpoint, obj["device"]), 0) + 1
            self._indexes = {"cables": cables, "counts": counts}
        return self._indexes

    def _matches(self, endpoint: str, row: dict[str, Any], query: dict[str, list[str]]) -> bool:
        for key, wanted in query.items():
            if key in ("limit", "offset", "brief", "ordering"):
                continue
            if key == "site_id":
                if str(self._site_of(endpoint, row)) not in wanted:
                    return False
            elif key == "device_id":
                device = row.get("device") or (row.get("assigned_object") or {}).get("device")
                if str((device or {}).get("id")) not in wanted:
                    return False
            else:
                value = row.get(key)
                if isinstance(value, dict):
                    value = value.get("id")
                if str(value) not in wanted:
                    return False
        return True

    def _site_of(self, endpoint: str, row: dict[str, Any]) -> Any:
        if endpoint == "dcim/sites":
            return row["id"]
        if "site" in row:
            return (row["site"] or {}).get("id")
        if "device" in row:
            device = self._find("dcim/devices", row["device"]["id"])
            return (device or {}).get("site", {}).get("id")
        if endpoint == "dcim/cables":
            for term in row.get("a_terminations") or []:
                device = self._find("dcim/devices", term["object"]["device"]["id"])
                return (device or {}).get("site", {}).get("id")
        return None

    def _find(self, endpoint: str, key: int) -> dict[str, Any] | None:
        return next((r for r in self.rows(endpoint) if r["id"] == key), None)

    # create and render --------------------------------------------------------------------------
    def create(self, endpoint: str, item: dict[str, Any]) -> dict[str, Any]:
        """Store `item` (the body of a POST) under a new id; the stored object."""
        required = {"dcim/devices": ("name", "role", "device_type", "site"),
                    "dcim/interfaces": ("device", "name", "type"),
                    "dcim/inventory-items": ("device", "name"),
                    "dcim/cables": ("a_terminations", "b_terminations"),
                    "ipam/ip-addresses": ("address",),
                    "extras/custom-fields": ("name", "type", "object_types")}.get(endpoint, ())
        absent = [k for k in required if k not in item]
        if absent:
            raise ValueError(f"{endpoint}: {', '.join(absent)}: This field is required.")
        known = {cf["name"] for cf in self.store["extras/custom-fields"].values()}
        unknown = set(item.get("custom_fields") or {}) - known
        if unknown:
            raise ValueError(f"Unknown field name '{sorted(unknown)[0]}' in custom field data.")
        obj = {**item, "id": self.next_id}
        self.next_id += 1
        self._indexes = None
        self.store[endpoint][obj["id"]] = obj
        return obj

    def _url(self, endpoint: str, key: int) -> str:
        return f"{self.url}/api/{endpoint}/{key}/"

    def _brief(self, endpoint: str, key: Any) -> dict[str, Any] | None:
        obj = self.store[endpoint].get(key) if key is not None else None
        if obj is None:
            return None
        brief: dict[str, Any] = {"id": obj["id"], "url": self._url(endpoint, obj["id"]),
                                 "display": obj.get("name") or obj.get("model") or
                                 obj.get("address")}
        if endpoint == "dcim/device-types":
            brief.update(manufacturer=self._brief("dcim/manufacturers", obj["manufacturer"]),
                         model=obj["model"], slug=obj["slug"],
                         description=obj.get("description", ""))
        elif endpoint == "dcim/interfaces":
            cable = self._index()["cables"].get(obj["id"])
            brief.update(device=self._brief("dcim/devices", obj["device"]), name=obj["name"],
                         description=obj.get("description", ""),
                         cable=self._cable_brief(cable), _occupied=cable is not None)
        else:
            brief.update(name=obj.get("name"), description=obj.get("description", ""))
            if "slug" in obj:
                brief["slug"] = obj["slug"]
        return brief

    def _cable_brief(self, cable: dict[str, Any] | None) -> dict[str, Any] | None:
        if cable is None:
            return None
        return {"id": cable["id"], "url": self._url("dcim/cables", cable["id"]),
                "display": cable.get("label") or f"#{cable['id']}",
                "label": cable.get("label", ""), "description": cable.get("description", "")}

    def _custom(self, endpoint: str, obj: dict[str, Any]) -> dict[str, Any]:
        model = _MODEL.get(endpoint)
        names = [cf["name"] for cf in self.store["extras/custom-fields"].values()
                 if model in cf["object_types"]]
        given = obj.get("custom_fields") or {}
        return {name: given.get(name) for name in names}

    def render(self, endpoint: str, obj: dict[str, Any]) -> dict[str, Any]:
        """`obj` as NetBox 4.6 returns it on GET."""
        key = obj["id"]
        base = {"id": key, "url": self._url(endpoint, key),
                "display_url": self._url(endpoint, key).replace("/api/", "/"),
                "display": obj.get("name") or obj.get("model") or obj.get("address") or
                obj.get("label") or f"#{key}"}
        tail: dict[str, Any] = {
            "owner": None, "tags": [], "custom_fields": self._custom(endpoint, obj),
            "created": STAMP, "last_updated": STAMP}
        if endpoint == "dcim/devices":
            return {**base, "name": obj["name"],
                    "device_type": self._brief("dcim/device-types", obj["device_type"]),
                    "role": self._brief("dcim/device-roles", obj["role"]), "tenant": None,
                    "platform": self._brief("dcim/platforms", obj.get("platform")),
                    "serial": "", "asset_tag": None,
                    "site": self._brief("dcim/sites", obj["site"]), "location": None,
                    "rack": self._brief("dcim/racks", obj.get("rack")), "position": None,
                    "face": None, "latitude": None, "longitude": None, "parent_device": None,
                    "status": {"value": obj.get("status", "active"), "label": "Active"},
                    "airflow": None, "primary_ip": None, "primary_ip4": None,
                    "primary_ip6": None, "oob_ip": None, "cluster": None,
                    "virtual_chassis": None, "vc_position": None, "vc_priority": None,
                    "description": obj.get("description", ""), "comments": "",
                    "config_template": None, "local_context_data": None, **tail,
                    "interface_count": self._index()["counts"].get(("dcim/interfaces", key), 0),
                    "inventory_item_count": self._index()["counts"].get(
                        ("dcim/inventory-items", key), 0)}
        if endpoint == "dcim/interfaces":
            cable = self._index()["cables"].get(key)
            return {**base, "device": self._brief("dcim/devices", obj["device"]), "vdcs": [],
                    "module": None, "name": obj["name"], "label": obj.get("label", ""),
                    "type": {"value": obj["type"], "label": obj["type"]}, "enabled": True,
                    "parent": None, "bridge": None, "lag": None, "mtu": obj.get("mtu"),
                    "mac_address": None, "primary_mac_address": None, "mac_addresses": [],
                    "speed": obj.get("speed"), "duplex": None, "wwn": None,
                    "mgmt_only": False, "description": obj.get("description", ""),
                    "mode": None, "untagged_vlan": None, "tagged_vlans": [],
                    "mark_connected": False,
                    "cable": self._cable_brief(cable),
                    "cable_end": "" if cable is None else "A" if any(
                        t["object_id"] == key for t in cable["a_terminations"]) else "B",
                    "link_peers": [],
                    "link_peers_type": None, "vrf": None, **tail, "count_ipaddresses": 0,
                    "count_fhrp_groups": 0, "_occupied": cable is not None}
        if endpoint == "dcim/inventory-items":
            return {**base, "device": self._brief("dcim/devices", obj["device"]),
                    "parent": None, "name": obj["name"], "label": obj.get("label", ""),
                    "status": {"value": "active", "label": "Active"}, "role": None,
                    "manufacturer": None, "part_id": obj.get("part_id", ""), "serial": "",
                    "asset_tag": None, "discovered": False,
                    "description": obj.get("description", ""), "component_type": None,
                    "component_id": None, "component": None, **tail, "_depth": 0}
        if endpoint == "dcim/cables":
            def ends(side: str) -> list[dict[str, Any]]:
                return [{"object_type": t["object_type"], "object_id": t["object_id"],
                         "object": self._brief("dcim/interfaces", t["object_id"])}
                        for t in obj[side]]
            return {**base, "type": obj.get("type") or None,
                    "a_terminations": ends("a_terminations"),
                    "b_terminations": ends("b_terminations"),
                    "status": {"value": obj.get("status", "connected"), "label": "Connected"},
                    "profile": None, "tenant": None, "bundle": None,
                    "label": obj.get("label", ""), "color": "", "length": obj.get("length"),
                    "length_unit": {"value": obj["length_unit"], "label": "Meters"}
                    if obj.get("length_unit") else None,
                    "description": obj.get("description", ""), "comments": "", **tail}
        if endpoint == "ipam/ip-addresses":
            iface = self._brief("dcim/interfaces", obj.get("assigned_object_id"))
            return {**base, "family": {"value": 6 if ":" in obj["address"] else 4,
                                       "label": "IPv6" if ":" in obj["address"] else "IPv4"},
                    "address": obj["address"], "vrf": None, "tenant": None,
                    "status": {"value": obj.get("status", "active"), "label": "Active"},
                    "role": None, "assigned_object_type": obj.get("assigned_object_type"),
                    "assigned_object_id": obj.get("assigned_object_id"),
                    "assigned_object": iface, "nat_inside": None, "nat_outside": [],
                    "dns_name": "", "description": "", "comments": "", **tail}
        if endpoint == "dcim/sites":
            return {**base, "name": obj["name"], "slug": obj["slug"],
                    "status": {"value": obj.get("status", "active"), "label": "Active"},
                    "region": None, "group": None, "tenant": None, "facility": "",
                    "time_zone": None, "description": obj.get("description", ""),
                    "physical_address": "", "shipping_address": "", "latitude": None,
                    "longitude": None, "comments": "", "asns": [], **tail}
        if endpoint == "extras/custom-fields":
            return {**base, "object_types": obj["object_types"], "type": {
                "value": obj["type"], "label": obj["type"]}, "name": obj["name"],
                "label": obj.get("label", ""), "description": obj.get("description", ""),
                "required": obj.get("required", False), "created": STAMP,
                "last_updated": STAMP}
        rendered = {**base, **{k: v for k, v in obj.items() if k not in ("id",)}}
        for ref, target in (("site", "dcim/sites"), ("manufacturer", "dcim/manufacturers")):
            if ref in obj:
                rendered[ref] = self._brief(target, obj[ref])
        return {**rendered, **tail}

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every stored object as NetBox JSON, by endpoint (what GET returns)."""
        return {endpoint: self.rows(endpoint) for endpoint in ENDPOINTS}

    def record(self, folder: Path, host: str | None = None) -> None:
        """Write every endpoint's full list answer (`limit=0`, as one page) to `folder`, in the
        form `NetboxServer(recorded=folder)` serves; `host` replaces this server's address in
        the links."""
        folder.mkdir(parents=True, exist_ok=True)
        for endpoint, rows in self.dump().items():
            text = json.dumps({"count": len(rows), "next": None, "previous": None,
                               "results": rows}, indent=1) + "\n"
            if host is not None:
                text = text.replace(self.url, host)
            (folder / f"{endpoint.replace('/', '__')}.json").write_text(text)


@contextmanager
def netbox_server(recorded: Path | None = None,
                  api_version: str = API_VERSION) -> Iterator[NetboxServer]:
    """A running server (see `NetboxServer`), stopped on leaving."""
    server = NetboxServer(recorded, api_version=api_version)
    try:
        yield server
    finally:
        server.stop()
