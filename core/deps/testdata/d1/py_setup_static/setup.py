#! /usr/bin/env python3

from setuptools import setup
from setuptools.extension import Extension
import os
import sys

PKG_DIR = 'pyroaring'
VERSION = '0.4.2'
BASE = ["numpy>=1.20",  # arrays
        'six']
EXTRA_NOTE = """setup(install_requires=['not-a-dep'])"""

# setup(install_requires=['commented-out'])

def helper():
    pass

setup(
    name='pyroaring',
    version=VERSION,
    description='Fast and lightweight set for unsigned 32 bits integers.',
    install_requires=BASE + [
        'requests ' '>=2.0',
        "attrs==23.1.0; python_version >= '3.7'",
    ],
    setup_requires=['cython<3.0.0'],
    extras_require={'dev': ['pytest']},
    url='https://github.com/Ezibenroc/PyRoaringBitMap',
)
