package com.example.util;
public class Tool { public static void main(String[] args) {} }
