"""The editor paints before it loads networkx (0.4-0.6 s of a 1-2 s start): the graph's own
order and cycle checks use the standard library, and the layout imports networkx when it
lays a level out."""
import os
import subprocess
import sys

FIRST_PAINT = """
import sys
from PySide6.QtWidgets import QApplication
from tfstudio.gui.main_window import MainWindow
app = QApplication([])
window = MainWindow()
window.resize(1366, 768)
window.show()
for _ in range(20):
    app.processEvents()
print("networkx" in sys.modules)
from tfstudio.graph import layout
import tfstudio
layout.tidy_positions(tfstudio.load_graph("tiny-gpt"))
print("networkx" in sys.modules)
"""


def test_the_editor_paints_the_default_graph_without_networkx_and_tidy_loads_it():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", FIRST_PAINT], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
