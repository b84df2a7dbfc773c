//! A graph under edit together with its [`GraphIndex`], kept current through each edit instead
//! of rebuilt: replacing a node, inserting nodes, and removing the nodes an edit made dead cost
//! what they touch plus one renumbering pass over the index, with no hashing of the whole graph.
//! After every call the index equals `GraphIndex::new` of the graph (checked in tests).

use crate::graph::{names_read_in, GraphIndex};
use nonzero_proto::onnx::{GraphProto, NodeProto};
use std::collections::HashSet;

/// A graph and its index, edited together.
#[derive(Debug)]
pub struct IndexedGraph<'g> {
    graph: &'g mut GraphProto,
    index: GraphIndex,
}

impl<'g> IndexedGraph<'g> {
    pub fn new(graph: &'g mut GraphProto) -> Self {
        let index = GraphIndex::new(graph);
        IndexedGraph { graph, index }
    }

    pub fn graph(&self) -> &GraphProto {
        &*self.graph
    }

    /// The index, current with every edit (the analysis layer's `View` reads the two).
    pub fn index(&self) -> &GraphIndex {
        &self.index
    }

    /// Puts `node` in place of node `i` and returns the node it replaced.
    pub fn replace(&mut self, i: usize, node: NodeProto) -> NodeProto {
        let _ = self.unregister(i);
        let old = std::mem::replace(&mut self.graph.node[i], node);
        self.register(i);
        self.check();
        old
    }

    /// Inserts `nodes` before node `at` (at the end when `at` is the node count), in order: for
    /// edits that add nodes before the one they replace (`replace(i, ..)`, then `insert(i, ..)`).
    pub fn insert(&mut self, at: usize, nodes: Vec<NodeProto>) {
        let k = nodes.len();
        if k == 0 {
            return;
        }
        let n = self.graph.node.len();
        self.renumber(
            &(0..n)
                .map(|i| if i < at { i } else { i + k })
                .collect::<Vec<_>>(),
        );
        self.graph.node.splice(at..at, nodes);
        for i in at..at + k {
            self.register(i);
        }
        self.check();
    }

    /// Removes nodes whose outputs are in `candidates` and read by nobody, then the nodes and
    /// initializers that only they read, and the value infos of removed tensors. Returns how
    /// many nodes went. (A node goes when one of its outputs is a candidate, all of them are
    /// empty or unread, and it has outputs; the inputs of a removed node become candidates.
    /// The set removed does not depend on the order, so a work list finds the same one as
    /// rounds over the whole graph.)
    pub fn remove_dead(&mut self, mut candidates: HashSet<String>) -> usize {
        let mut removed = vec![false; self.graph.node.len()];
        let mut removed_outputs = HashSet::new();
        let mut removed_inputs = HashSet::new();
        let mut todo: Vec<String> = candidates.iter().cloned().collect();
        // An empty name stands for omitted outputs: it makes every node with one a candidate.
        let mut empty_seen = false;
        while let Some(name) = todo.pop() {
            let nodes: Vec<usize> = if name.is_empty() {
                if std::mem::replace(&mut empty_seen, true) {
                    continue;
                }
                (0..self.graph.node.len())
                    .filter(|&i| self.graph.node[i].output.iter().any(String::is_empty))
                    .collect()
            } else {
                self.index
                    .producer
                    .get(&name)
                    .copied()
                    .into_iter()
                    .collect()
            };
            for i in nodes {
                let node = &self.graph.node[i];
                let dead = !removed[i]
                    && !node.output.is_empty()
                    && node.output.iter().any(|o| candidates.contains(o))
                    && node
                        .output
                        .iter()
                        .all(|o| o.is_empty() || self.index.unused(o));
                if !dead {
                    continue;
                }
                removed[i] = true;
                let reads = self.unregister(i);
                let node = &self.graph.node[i];
                removed_outputs.extend(node.output.iter().cloned());
                removed_inputs.extend(node.input.iter().cloned());
                candidates.extend(node.input.iter().cloned());
                // What fed a removed node (inputs, and names its subgraphs read) may now be
                // dead too: look at the producers again, even of names already candidates.
                todo.extend(node.input.iter().filter(|n| n.is_empty()).cloned());
                todo.extend(reads.into_iter().map(|(name, _)| name));
            }
        }
        let count = removed.iter().filter(|&&r| r).count();
        if count > 0 {
            let mut next = 0;
            let map: Vec<usize> = removed
                .iter()
                .map(|&r| {
                    next += usize::from(!r);
                    if r {
                        usize::MAX
                    } else {
                        next - 1
                    }
                })
                .collect();
            self.renumber(&map);
            let mut flags = removed.into_iter();
            self.graph.node.retain(|_| !flags.next().unwrap_or(false));
        }
        let index = &self.index;
        self.graph.initializer.retain(|t| {
            let name = t.name.as_deref().unwrap_or("");
            !(removed_inputs.contains(name)
                && index.unused(name)
                && !index.graph_inputs.contains(name))
        });
        self.graph.value_info.retain(|vi| {
            !vi.name
                .as_ref()
                .is_some_and(|n| removed_outputs.contains(n))
        });
        self.check();
        count
    }

    /// The names node `i` reads: its inputs with their slots, then what its subgraphs read
    /// (slot `usize::MAX`), as `GraphIndex::new` records them.
    fn reads(&self, i: usize) -> Vec<(String, usize)> {
        let node = &self.graph.node[i];
        let mut reads: Vec<(String, usize)> = node
            .input
            .iter()
            .enumerate()
            .filter(|(_, name)| !name.is_empty())
            .map(|(slot, name)| (name.clone(), slot))
            .collect();
        let mut captured = HashSet::new();
        for a in &node.attribute {
            for g in a.g.iter().chain(a.graphs.iter()) {
                names_read_in(g, &mut captured, 0);
            }
        }
        reads.extend(captured.into_iter().map(|name| (name, usize::MAX)));
        reads
    }

    /// Adds node `i`'s outputs and reads to the index (reader lists stay in node order).
    fn register(&mut self, i: usize) {
        for out in self.graph.node[i].output.iter().filter(|o| !o.is_empty()) {
            self.index.producer.insert(out.clone(), i);
        }
        for (name, slot) in self.reads(i) {
            let list = self.index.readers.entry(name).or_default();
            let at = list.partition_point(|&entry| entry < (i, slot));
            list.insert(at, (i, slot));
        }
    }

    /// Takes node `i`'s outputs and reads out of the index; returns the reads.
    fn unregister(&mut self, i: usize) -> Vec<(String, usize)> {
        for out in self.graph.node[i].output.iter().filter(|o| !o.is_empty()) {
            if self.index.producer.get(out) == Some(&i) {
                self.index.producer.remove(out);
            }
        }
        let reads = self.reads(i);
        for (name, _) in &reads {
            if let Some(list) = self.index.readers.get_mut(name) {
                list.retain(|&(r, _)| r != i);
                if list.is_empty() {
                    self.index.readers.remove(name);
                }
            }
        }
        reads
    }

    /// Moves every node position `p` in the index to `map[p]` (an increasing map, so reader
    /// lists stay sorted). Positions of removed nodes must be unregistered first.
    fn renumber(&mut self, map: &[usize]) {
        for p in self.index.producer.values_mut() {
            *p = map[*p];
        }
        for list in self.index.readers.values_mut() {
            for (r, _) in list.iter_mut() {
                *r = map[*r];
            }
        }
    }

    /// In tests, the index must equal a fresh one after every edit: this crate's own, and the
    /// driver's, which turn on the `check-index` feature as a dev-dependency.
    fn check(&self) {
        #[cfg(any(test, feature = "check-index"))]
        assert_eq!(
            self.index,
            GraphIndex::new(&*self.graph),
            "the kept index differs from a rebuilt one"
        );
    }
}

/// Removes nodes whose outputs are in `candidates` and read by nobody, then the nodes and
/// initializers that only they read, and the value infos of removed tensors. Returns how many
/// nodes went.
pub fn remove_dead(graph: &mut GraphProto, candidates: HashSet<String>) -> usize {
    IndexedGraph::new(graph).remove_dead(candidates)
}
