from setuptools import setup
setup(name='pkg', packages=['pkg'], install_requires=['requests'])
