// SPDX-License-Identifier: GPL-3.0-or-later
// The gallery grid's model: a list of texts whose GtkStringObjects are made only when GTK
// asks for them (the rows on screen), not 100,000 at once as GtkStringList makes them.
#include "nu11gtk.h"
#include <stdlib.h>

G_DECLARE_FINAL_TYPE(N11CellModel, n11g_cell_model, N11, CELL_MODEL, GObject)

struct _N11CellModel {
    GObject parent_instance;
    char **texts;      // count texts, owned (malloc'ed, as handed to n11g_cell_model_replace)
    GObject **objects; // count slots: the object made for each text, NULL until asked for
    guint count;
};

static void n11g_cell_model_iface_init(GListModelInterface *iface);
G_DEFINE_FINAL_TYPE_WITH_CODE(N11CellModel, n11g_cell_model, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, n11g_cell_model_iface_init))

static void clear(N11CellModel *self) {
    for (guint i = 0; i < self->count; i++) {
        free(self->texts[i]);
        if (self->objects[i]) g_object_unref(self->objects[i]);
    }
    free(self->texts);
    free(self->objects);
    self->texts = NULL;
    self->objects = NULL;
    self->count = 0;
}

static void n11g_cell_model_finalize(GObject *object) {
    clear((N11CellModel *)object);
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
    if (self->objects[position] == NULL)
        self->objects[position] = G_OBJECT(gtk_string_object_new(self->texts[position] ? self->texts[position] : ""));
    return g_object_ref(self->objects[position]);
}

static void n11g_cell_model_iface_init(GListModelInterface *iface) {
    iface->get_item_type = item_type;
    iface->get_n_items = n_items;
    iface->get_item = get_item;
}

GListModel *n11g_cell_model_new(void) { return G_LIST_MODEL(g_object_new(n11g_cell_model_get_type(), NULL)); }

int n11g_cell_model_replace(GListModel *model, char **texts, guint count) {
    N11CellModel *self = (N11CellModel *)model;
    GObject **objects = count ? calloc(count, sizeof *objects) : NULL;
    if (count && objects == NULL) return -1;
    guint old = self->count;
    clear(self);
    self->texts = texts;
    self->objects = objects;
    self->count = count;
    g_list_model_items_changed(model, 0, old, count);
    return 0;
}
