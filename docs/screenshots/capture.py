#!/usr/bin/env python3
"""capture.py SPEEDSCOPE_DIR TIMELINE WIDTHxHEIGHT OUT.png

Opens a Chrome JSON timeline in speedscope (the npm package's offline build; SPEEDSCOPE_DIR is
the package's directory, holding dist/release/index.html) inside headless Chromium and saves one
PNG showing its lanes one above the other. Speedscope shows one lane (one pid/tid of the
timeline) at a time, named in its toolbar ("vm pid 123 (pid 1), tid 123 (tid 2) (1/3)"), each
fitted to its own time range; its "n" key steps to the next lane. Each lane is captured in a
WIDTHxHEIGHT view, up to MAX_LANES of them, and the captures are stacked by the same browser.

Chromium is driven through the DevTools protocol on a pipe (--remote-debugging-pipe: JSON
messages ending in NUL, commands on the browser's fd 3, replies and events on its fd 4), which
needs nothing beyond the standard library; a plain `chromium --screenshot` could not step lanes
nor wait until speedscope has drawn. The timeline reaches speedscope the way its own command-line
launcher hands it over: a script calling speedscope.loadFileFromBase64, named by the
#localProfilePath= fragment of the file:// page. Nothing is fetched from the network.
"""

import base64
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

TIMEOUT_S = 60


class Browser:
    """Headless Chromium with one page, spoken to over the DevTools pipe."""

    def __init__(self, width, height, profile_dir):
        chromium = shutil.which('chromium') or shutil.which('chromium-browser')
        if chromium is None:
            sys.exit('capture.py: chromium is not installed (Debian: apt-get install chromium)')
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The browser expects the pipe on fds 3 and 4: a shell places them there and execs it.
        command = ['sh', '-c', f'exec "$@" 3<&{to_browser_r} 4>&{from_browser_w}', 'sh', chromium,
                   '--headless', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu',
                   '--no-first-run', '--hide-scrollbars', '--force-device-scale-factor=1',
                   f'--user-data-dir={profile_dir}', f'--window-size={width},{height}',
                   'about:blank']
        self.process = subprocess.Popen(command, pass_fds=(to_browser_r, from_browser_w),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.pending = b''
        self.next_id = 0
        self.session = None
        target = self.call('Target.createTarget', url='about:blank')['targetId']
        self.session = self.call('Target.attachToTarget', targetId=target,
                                 flatten=True)['sessionId']
        self.resize(width, height)

    def call(self, method, **params):
        """Sends one command and returns its result, skipping the events in between."""
        self.next_id += 1
        message = {'id': self.next_id, 'method': method, 'params': params}
        if self.session is not None:
            message['sessionId'] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b'\0')
        while True:
            reply = self.receive()
            if reply.get('id') != self.next_id:
                continue
            if 'error' in reply:
                sys.exit(f'capture.py: {method} failed: {reply["error"].get("message")}')
            return reply['result']

    def receive(self):
        while b'\0' not in self.pending:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                sys.exit('capture.py: chromium closed the DevTools pipe')
            self.pending += chunk
        message, self.pending = self.pending.split(b'\0', 1)
        return json.loads(message)

    def evaluate(self, expression):
        """The value of a page expression; a promise is awaited."""
        result = self.call('Runtime.evaluate', expression=expression, returnByValue=True,
                           awaitPromise=True)
        return result['result'].get('value')

    def wait_for(self, expression, what):
        deadline = time.monotonic() + TIMEOUT_S
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                sys.exit(f'capture.py: gave up waiting for {what}')
            time.sleep(0.2)

    def press(self, key):
        """A key typed on the page (keyDown with text also delivers the keypress)."""
        self.call('Input.dispatchKeyEvent', type='keyDown', key=key, text=key)
        self.call('Input.dispatchKeyEvent', type='keyUp', key=key)

    def resize(self, width, height):
        self.call('Emulation.setDeviceMetricsOverride', width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def screenshot(self):
        """The page as PNG, base64-encoded, once what was last changed has been drawn."""
        # Two animation frames: speedscope draws on the frame after a change.
        self.evaluate('new Promise(done => requestAnimationFrame(() => '
                      'requestAnimationFrame(() => done(true))))')
        return self.call('Page.captureScreenshot', format='png')['data']

    def close(self):
        try:
            self.session = None
            self.call('Browser.close')
        finally:
            self.process.wait(timeout=TIMEOUT_S)


MAX_LANES = 8

# The toolbar's lane name, which ends in "(i/n)".
LANE_NAME = ('(() => { const t = document.body.innerText.match(/^.*\\(\\d+\\/\\d+\\)$/m);'
             ' return t ? t[0] : ""; })()')


def capture_lanes(browser, page, timeline_name):
    """Each lane's PNG (base64), in speedscope's order, and the lanes' names."""
    browser.call('Page.navigate', url=page)
    browser.wait_for(f'document.title.startsWith({json.dumps(timeline_name)})',
                     'speedscope to load the timeline')
    shots, names = [], []
    while True:
        name = browser.evaluate(LANE_NAME)
        shots.append(browser.screenshot())
        names.append(name)
        index, count = (int(n) for n in name.rsplit('(', 1)[1].rstrip(')').split('/'))
        if index == count or len(shots) == MAX_LANES:
            return shots, names
        browser.press('n')
        browser.wait_for(f'{LANE_NAME} !== {json.dumps(name)}', 'speedscope to show the next lane')


def stack(browser, shots, width, height):
    """One PNG of the captures one above the other, each under a thin rule."""
    rule = 2
    total = len(shots) * (height + rule)
    browser.resize(width, total)
    images = ''.join(f'<img src="data:image/png;base64,{shot}" style="display:block;'
                     f'border-top:{rule}px solid #444">' for shot in shots)
    browser.call('Page.navigate', url='about:blank')
    browser.evaluate(f'document.body.style.margin = "0"; document.body.innerHTML = '
                     f'{json.dumps(images)}; Promise.all([...document.images].map(i => i.decode()))'
                     f'.then(() => true)')
    return browser.screenshot()


def main():
    if len(sys.argv) != 5 or 'x' not in sys.argv[3]:
        sys.exit('usage: ' + __doc__.splitlines()[0])
    release = pathlib.Path(sys.argv[1]).resolve() / 'dist' / 'release' / 'index.html'
    timeline = pathlib.Path(sys.argv[2])
    width, height = (int(n) for n in sys.argv[3].split('x'))
    out = pathlib.Path(sys.argv[4])
    if not release.is_file():
        sys.exit(f'capture.py: no speedscope build at {release}')
    if not timeline.is_file():
        sys.exit(f'capture.py: no timeline at {timeline}')
    with tempfile.TemporaryDirectory(prefix='zeprof-capture.') as scratch:
        loader = pathlib.Path(scratch) / 'load-timeline.js'
        encoded = base64.b64encode(timeline.read_bytes()).decode()
        loader.write_text(f'speedscope.loadFileFromBase64({json.dumps(timeline.name)}, '
                          f'{json.dumps(encoded)})\n')
        browser = Browser(width, height, pathlib.Path(scratch) / 'chromium-profile')
        try:
            shots, names = capture_lanes(
                browser, f'{release.as_uri()}#localProfilePath={urllib.parse.quote(str(loader))}',
                timeline.name)
            out.write_bytes(base64.b64decode(stack(browser, shots, width, height)))
        finally:
            browser.close()
    for name in names:
        print(f'capture.py: {out}: {name}')


if __name__ == '__main__':
    main()
