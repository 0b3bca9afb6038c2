// SPDX-License-Identifier: GPL-3.0-or-later
// The gallery grid's model: a list of texts whose GtkStringObjects are made only when GTK
// asks for them (the rows on screen), not 100,000 at once as GtkStringList makes them. The
// texts themselves are made then too, by the app's provider (no text per row up front).
#include "nu11gtk.h"
#include <stdlib.h>

G_DECLARE_FINAL_TYPE(N11CellModel, n11g_cell_model, N11, CELL_MODEL, GObject)

struct _N11CellModel {
    GObject parent_instance;
    n11g_cell_text_fn text;   // writes a row's text
    gpointer data;            // the provider's, released with `destroy` at finalize
    GDestroyNotify destroy;
    GObject **objects; // count slots: the object made for each row, NULL until asked for
    guint count;
};

static void n11g_cell_model_iface_init(GListModelInterface *iface);
G_DEFINE_FINAL_TYPE_WITH_CODE(N11CellModel, n11g_cell_model, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, n11g_cell_model_iface_init))

static void clear(N11CellModel *self) {
    for (guint i = 0; i < self->count; i++) {
        if (self->objects[i]) g_object_unref(self->objects[i]);
    }
    free(self->objects);
    self->objects = NULL;
    self->count = 0;
}

static void n11g_cell_model_finalize(GObject *object) {
    N11CellModel *self = (N11CellModel *)object;
    clear(self);
    if (self->destroy != NULL && self->data != NULL) self->destroy(self->data);
    G_OBJECT_CLASS(n11g_cell_model_parent_class)->finalize(object);
}

static void n11g_cell_model_class_init(N11CellModelClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = n11g_cell_model_finalize;
}

static void n11g_cell_model_init(N11CellModel *self) { (void)self; }

static GType item_type(GListModel *list) { (void)list; return GTK_TYPE_STRING_OBJECT; }

static guint n_items(GListModel *list) { return ((N11CellModel *)list)->count; }

static gpointer get_item(GListModel *list, guint position) {
    N11CellModel *self = (N11CellModel *)list;
    if (position >= self->count) return NULL;
    if (self->objects[position] == NULL) {
        char text[256] = "";
        if (self->text != NULL) self->text(self->data, position, text, sizeof text);
        text[sizeof text - 1] = '\0';
        self->objects[position] = G_OBJECT(gtk_string_object_new(text));
    }
    return g_object_ref(self->objects[position]);
}

static void n11g_cell_model_iface_init(GListModelInterface *iface) {
    iface->get_item_type = item_type;
    iface->get_n_items = n_items;
    iface->get_item = get_item;
}

GListModel *n11g_cell_model_new(n11g_cell_text_fn text, gpointer data, GDestroyNotify destroy) {
    N11CellModel *self = g_object_new(n11g_cell_model_get_type(), NULL);
    self->text = text;
    self->data = data;
    self->destroy = destroy;
    return G_LIST_MODEL(self);
}

int n11g_cell_model_reset(GListModel *model, guint count) {
    N11CellModel *self = (N11CellModel *)model;
    GObject **objects = count ? calloc(count, sizeof *objects) : NULL;
    if (count && objects == NULL) return -1;
    guint old = self->count;
    clear(self);
    self->objects = objects;
    self->count = count;
    g_list_model_items_changed(model, 0, old, count);
    return 0;
}
