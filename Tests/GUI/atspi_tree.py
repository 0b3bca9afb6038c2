# SPDX-License-Identifier: GPL-3.0-or-later
"""The app's accessibility tree read the cheap way, as a screen reader's cache does.

pyatspi asks the app over D-Bus for every child, name and role one call at a time: a tree of
400 accessibles cost 1.5–4 s a walk on a loaded 2-core machine, and the GUI test walks it
thousands of times. GTK serves its whole AT-SPI cache in one call (org.a11y.atspi.Cache.GetItems:
every accessible's name, role, states, interfaces and count of presented children), so a walk
here is that call plus the app's own GetChildren for each accessible that has children: the tree
GTK presents, in pyatspi's order. The structure is always asked of the app: GTK adds a widget to
its cache only once something asked for it (a new page's children are missing until then), and
the cache keeps hidden widgets. A child the snapshot lacks is asked of the app in full. Names, roles and states come from the snapshot
taken at the walk's start; what a test asks of a node afterwards (its state, name, extents,
actions, text, children) is asked of the app again, as pyatspi would.

Node implements the part of pyatspi's Accessible the GUI test uses."""
import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, Gio, GLib  # noqa: E402

ROOT = "/org/a11y/atspi/accessible/root"
ACCESSIBLE = "org.a11y.atspi.Accessible"
_bus = []
_last = {}  # the last walk's snapshot: path → (name, role, interfaces, states, child count)


def bus():
    """The accessibility bus (its address from the session bus's org.a11y.Bus)."""
    if not _bus:
        session = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        address = session.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                                    GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 10000, None).unpack()[0]
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        _bus.append(Gio.DBusConnection.new_for_address_sync(address, flags, None, None))
    return _bus[0]


def call(name, path, interface, method, args=None, reply=None):
    value = bus().call_sync(name, path, interface, method, args, GLib.VariantType(reply) if reply else None,
                            Gio.DBusCallFlags.NONE, 20000, None)
    return value.unpack() if value is not None else None


def prop(name, path, interface, what):
    return call(name, path, "org.freedesktop.DBus.Properties", "Get", GLib.Variant("(ss)", (interface, what)), "(v)")[0]


class StateSet:
    def __init__(self, words):
        self.words = list(words) + [0, 0]

    def contains(self, state):
        n = int(state)
        return bool(self.words[n // 32] & (1 << (n % 32)))


class Box:
    def __init__(self, x, y, width, height):
        self.x, self.y, self.width, self.height = x, y, width, height


class Action:
    def __init__(self, node):
        self.node = node

    @property
    def nActions(self):
        return prop(self.node.bus_name, self.node.path, "org.a11y.atspi.Action", "NActions")

    def doAction(self, index):
        return call(self.node.bus_name, self.node.path, "org.a11y.atspi.Action", "DoAction", GLib.Variant("(i)", (index,)), "(b)")[0]


class Component:
    def __init__(self, node):
        self.node = node

    def getExtents(self, coords):
        x, y, w, h = call(self.node.bus_name, self.node.path, "org.a11y.atspi.Component", "GetExtents",
                          GLib.Variant("(u)", (int(coords),)), "((iiii))")[0]
        return Box(x, y, w, h)


class Text:
    def __init__(self, node):
        self.node = node

    @property
    def characterCount(self):
        return prop(self.node.bus_name, self.node.path, "org.a11y.atspi.Text", "CharacterCount")

    def getText(self, start, end):
        return call(self.node.bus_name, self.node.path, "org.a11y.atspi.Text", "GetText", GLib.Variant("(ii)", (start, end)), "(s)")[0]


class Node:
    """One accessible: `snap_name`, `role`, `interfaces` and `states` as of the walk."""

    def __init__(self, bus_name, path, item=None):
        self.bus_name, self.path = bus_name, path
        if item is None:  # not in the snapshot (made since): asked of the app
            item = (call(bus_name, path, ACCESSIBLE, "GetRole", None, "(u)")[0],
                    call(bus_name, path, ACCESSIBLE, "GetInterfaces", None, "(as)")[0],
                    prop(bus_name, path, ACCESSIBLE, "Name"), call(bus_name, path, ACCESSIBLE, "GetState", None, "(au)")[0], -1)
            item = (item[2], item[0], item[1], item[3], item[4])
        self.snap_name, self.role, self.interfaces, self.states, self.count = item

    def __eq__(self, other):
        return isinstance(other, Node) and (self.bus_name, self.path) == (other.bus_name, other.path)

    def __hash__(self):
        return hash((self.bus_name, self.path))

    @property
    def name(self):
        return prop(self.bus_name, self.path, ACCESSIBLE, "Name")

    def getRoleName(self):
        return Atspi.role_get_name(Atspi.Role(self.role))

    def getState(self):
        return StateSet(call(self.bus_name, self.path, ACCESSIBLE, "GetState", None, "(au)")[0])

    def snap_state(self, state):
        return StateSet(self.states).contains(state)

    def _interface(self, short, cls):
        if "org.a11y.atspi." + short not in self.interfaces:
            raise NotImplementedError(f"{self.snap_name!r} has no {short} interface")
        return cls(self)

    def queryAction(self):
        return self._interface("Action", Action)

    def queryComponent(self):
        return self._interface("Component", Component)

    def queryText(self):
        return self._interface("Text", Text)

    def __iter__(self):
        """The children, asked of the app; their roles and interfaces (which do not change) from
        the last walk's snapshot when it has them (their names and states are asked again)."""
        children = call(self.bus_name, self.path, ACCESSIBLE, "GetChildren", None, "(a(so))")[0]
        return iter([Node(name, path, _last.get(path)) for name, path in children])


def app_node(app_name):
    """The application `app_name` as the registry lists it (the first, as pyatspi's desktop)."""
    for name, path in call("org.a11y.atspi.Registry", ROOT, ACCESSIBLE, "GetChildren", None, "(a(so))")[0]:
        try:
            if prop(name, path, ACCESSIBLE, "Name") == app_name:
                return name
        except GLib.Error:
            continue
    return None


def tree(app_name):
    """Every presented accessible of the app, depth first from its root (pyatspi's walk
    order), or [] when the app is not there or went away during the walk."""
    name = app_node(app_name)
    if name is None:
        return []
    try:
        items = bus().call_sync(name, "/org/a11y/atspi/cache", "org.a11y.atspi.Cache", "GetItems", None,
                                GLib.VariantType("(a((so)(so)(so)iiassusau))"), Gio.DBusCallFlags.NONE, 20000, None)
    except GLib.Error:
        return []
    snapshot = {}
    array = items.get_child_value(0)
    for i in range(array.n_children()):
        # Only the fields used, read one by one: PyGObject's generic unpack of the whole reply
        # cost a fifth of a second a walk.
        item = array.get_child_value(i)
        path = item.get_child_value(0).get_child_value(1).get_string()
        snapshot[path] = (item.get_child_value(6).get_string(), item.get_child_value(7).get_uint32(),
                          item.get_child_value(5).get_strv(), item.get_child_value(9).unpack(),
                          item.get_child_value(4).get_int32())
    _last.clear()
    _last.update(snapshot)
    out = []

    def visit(path):
        try:
            node = Node(name, path, snapshot.get(path))
        except GLib.Error:
            return  # gone since the snapshot
        out.append(node)
        if path != ROOT and node.count == 0:
            return  # GTK's count of the children it presents: GetChildren would list none
        try:
            children = call(name, path, ACCESSIBLE, "GetChildren", None, "(a(so))")[0]
        except GLib.Error:
            return
        for _, child in children:
            visit(child)
    visit(ROOT)
    return out
